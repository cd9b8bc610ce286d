//! The layers of ARCHITECTURE.md, held by a test (as import-linter and ArchUnit do): every
//! `crate::` path in `src/` outside `#[cfg(test)]` items, every `super::` that climbs out of
//! its top-level module, and every `bytepath::` path of `main.rs` must name a module of a lower
//! layer, or one of the few same-layer neighbours listed with its reason. Each import that
//! climbs is printed with its file, line and edge. The layers and neighbours are read from the
//! tables of docs/ARCHITECTURE.md, so the test and the document cannot disagree: a new
//! top-level module needs a place in that document's layer table. The sources are read with
//! `syn` (tests/rust_paths): paths in comments and strings are none, paths in macro arguments
//! count.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "layers/circles.rs"]
mod circles;
mod rust_paths;

use rust_paths::TestFile;

/// The layers and same-layer neighbours of docs/ARCHITECTURE.md, read from its tables.
struct Map {
    /// Every top-level module and its layer, bottom (0) to top.
    layers: BTreeMap<String, u32>,
    /// The imports allowed within one layer: (from, to, why). Anything else within a layer
    /// (the studies knowing each other, above all) fails like an import that climbs.
    neighbours: Vec<(String, String, String)>,
}

/// The names in backquotes of a table cell: `sys/` -> sys, `main.rs` -> main.
fn quoted_names(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(|n| n.trim_end_matches('/').trim_end_matches(".rs").to_string())
        .collect()
}

/// Reads the layer table (rows whose first cell is a number) and the neighbours table (the
/// rows of the table under the heading that names "Neighbours").
fn read_map(document: &str) -> Map {
    let mut layers = BTreeMap::new();
    let mut neighbours = Vec::new();
    let mut in_neighbours = false;
    for line in document.lines() {
        if line.starts_with('#') {
            in_neighbours = line.contains("Neighbours");
            continue;
        }
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
        if !line.trim_start().starts_with('|') || cells.len() < 3 {
            continue;
        }
        if let Ok(layer) = cells[0].trim().parse::<u32>() {
            for name in quoted_names(cells[1]) {
                layers.insert(name, layer);
            }
        } else if in_neighbours {
            let (from, to) = (quoted_names(cells[0]), quoted_names(cells[1]));
            if let ([from], [to]) = (&from[..], &to[..]) {
                neighbours.push((from.clone(), to.clone(), cells[2].trim().to_string()));
            }
        }
    }
    Map { layers, neighbours }
}

/// The map of the repository's docs/ARCHITECTURE.md.
fn repository_map() -> Map {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md");
    let document = std::fs::read_to_string(&path).expect("docs/ARCHITECTURE.md is readable");
    let map = read_map(&document);
    assert!(
        map.layers.len() > 10 && !map.neighbours.is_empty(),
        "docs/ARCHITECTURE.md lost its layer or neighbours table"
    );
    map
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Import {
    file: String,
    line: usize,
    from: String,
    to: String,
}

/// A path one file names, resolved from the crate root (`super::x` in `a/b.rs` -> a::x).
#[derive(Debug, Clone)]
struct Reference {
    file: String,
    line: usize,
    module: Vec<String>,
    target: Vec<String>,
}

/// The imports of one file whose module path (from the crate root) is `module`, the paths it
/// names (resolved from the crate root) and the test-only files it declares; `root` is how the
/// file names the library's root (`crate`, or `bytepath` in main.rs). Paths under
/// `#[cfg(test)]` are left out.
fn imports(
    path: &Path,
    shown: &str,
    module: &[String],
    root: &str,
) -> (Vec<Import>, Vec<Reference>, Vec<TestFile>) {
    let text = std::fs::read_to_string(path).unwrap();
    let source = rust_paths::read(&text, true).unwrap_or_else(|e| panic!("{shown}: {e}"));
    let from = &module[0];
    let mut found = BTreeSet::new();
    let mut references = Vec::new();
    for named in &source.named {
        let here = [module, &named.inline].concat();
        let climbs = named.segments.iter().take_while(|s| *s == "super").count();
        let (base, rest) = match named.segments.first() {
            Some(first) if first == root => (&[][..], &named.segments[1..]),
            Some(_) if climbs > 0 && climbs <= here.len() => {
                (&here[..here.len() - climbs], &named.segments[climbs..])
            }
            _ => continue,
        };
        let target = [base, rest].concat();
        match target.first() {
            Some(to) if base.is_empty() && to != from => {
                found.insert(Import {
                    file: shown.to_string(),
                    line: named.line,
                    from: from.clone(),
                    to: to.clone(),
                });
            }
            None => continue,
            _ => {}
        }
        if root == "crate" {
            references.push(Reference {
                file: shown.to_string(),
                line: named.line,
                module: module.to_vec(),
                target,
            });
        }
    }
    (found.into_iter().collect(), references, source.test_files)
}

/// The module path of a file under `src/`: `remote/client/files.rs` -> remote::client::files.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// What the files of `src` import and name, and which files only tests compile.
struct Scan {
    files: Vec<PathBuf>,
    imports: Vec<Import>,
    references: Vec<Reference>,
    test_only: BTreeSet<String>,
}

fn scan(src: &Path) -> Scan {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut all = Vec::new();
    let mut references = Vec::new();
    let mut test_only = BTreeSet::new();
    for path in &files {
        let rel = path.strip_prefix(src).unwrap();
        let module = module_of(rel);
        let root = if rel == Path::new("main.rs") {
            "bytepath"
        } else {
            "crate"
        };
        let shown = format!("src/{}", rel.display());
        let (found, named, tests) = imports(path, &shown, &module, root);
        // The crate root only declares modules: of lib.rs, only its test-only files count.
        if rel != Path::new("lib.rs") {
            all.extend(found);
            references.extend(named);
        }
        // Where the files of the modules it declares are: beside a mod.rs, else in the folder
        // named after the file; the crate roots' beside them.
        let is_root = rel == Path::new("lib.rs") || rel == Path::new("main.rs");
        let dir = if is_root || rel.file_name().is_some_and(|n| n == "mod.rs") {
            rel.parent().unwrap().to_path_buf()
        } else {
            rel.with_extension("")
        };
        let beside = rel.parent().unwrap();
        for file in tests {
            let paths = match file {
                TestFile::Named(name) => {
                    vec![
                        dir.join(format!("{name}.rs")),
                        dir.join(name).join("mod.rs"),
                    ]
                }
                TestFile::Path(path) => vec![beside.join(path)],
            };
            for p in paths {
                test_only.insert(format!("src/{}", p.display()));
            }
        }
    }
    Scan {
        files,
        imports: all,
        references,
        test_only,
    }
}

/// Every import in `src` that climbs a layer or crosses one without being a listed neighbour,
/// as lines "file:line: from (layer a) imports to (layer b)…".
fn violations(src: &Path, map: &Map) -> Vec<String> {
    let layer = &map.layers;
    let neighbours: BTreeSet<(&str, &str)> = map
        .neighbours
        .iter()
        .map(|(a, b, _)| (a.as_str(), b.as_str()))
        .collect();
    let Scan {
        files,
        imports: all,
        test_only,
        ..
    } = scan(src);
    let mut out = Vec::new();
    let mut seen_modules = BTreeSet::new();
    for path in &files {
        let rel = path.strip_prefix(src).unwrap();
        let test_file = test_only.contains(&format!("src/{}", rel.display()));
        if rel != Path::new("lib.rs") && !test_file {
            seen_modules.insert(module_of(rel)[0].clone());
        }
    }
    for m in &seen_modules {
        if !layer.contains_key(m.as_str()) {
            out.push(format!(
                "src/{m}: a top-level module without a layer; add it to the layer table of docs/ARCHITECTURE.md"
            ));
        }
    }
    for i in all.iter().filter(|i| !test_only.contains(&i.file)) {
        let (Some(&a), Some(&b)) = (layer.get(i.from.as_str()), layer.get(i.to.as_str())) else {
            // A module without a row is reported above; anything else is not a module of
            // this crate (a crate-root item).
            continue;
        };
        let climbs = b > a;
        let sideways = b == a && !neighbours.contains(&(i.from.as_str(), i.to.as_str()));
        if climbs || sideways {
            let how = if climbs {
                "climbs"
            } else {
                "crosses its own layer"
            };
            out.push(format!(
                "{}:{}: {} (layer {a}) imports {} (layer {b}): {how}",
                i.file, i.line, i.from, i.to
            ));
        }
    }
    out
}

#[test]
fn no_module_imports_from_a_layer_above_it_or_a_neighbour_it_should_not_know() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = violations(&src, &repository_map());
    let mut report = String::new();
    for v in &found {
        let _ = writeln!(report, "{v}");
    }
    assert!(
        found.is_empty(),
        "{} import(s) against the layers of ARCHITECTURE.md:\n{report}",
        found.len()
    );
}

#[test]
fn the_neighbours_allowed_within_a_layer_form_no_circle() {
    let map = repository_map();
    for (a, b, _) in &map.neighbours {
        let layer = |m: &str| map.layers.get(m).copied();
        assert!(layer(a).is_some(), "{a} has no layer");
        assert_eq!(layer(a), layer(b), "{a} and {b} are not in one layer");
        assert!(
            !map.neighbours.iter().any(|(x, y, _)| (x, y) == (b, a)),
            "{a} and {b} may not import each other"
        );
    }
}

#[test]
fn the_reader_sees_paths_in_groups_climbing_supers_and_macros_but_not_in_strings_or_tests() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("sys")).unwrap();
    std::fs::create_dir_all(src.join("report")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod sys;\npub mod report;\n").unwrap();
    std::fs::write(
        src.join("sys/mod.rs"),
        "//! crate::report in a comment\nmod fine;\nconst S: &str = \"crate::report\";\n\
         #[cfg(test)]\nmod tests {\n    use crate::report;\n}\n#[cfg(test)]\nmod fixtures;\n",
    )
    .unwrap();
    std::fs::write(src.join("sys/fixtures.rs"), "use crate::report::x;\n").unwrap();
    std::fs::write(
        src.join("sys/fine.rs"),
        "use crate::{sys, report::{a, b}};\nfn f() { super::super::report::g(); }\n\
         fn h() { println!(\"{}\", crate::report::h()); }\n\
         struct T {\n    #[cfg(test)]\n    t: crate::report::T,\n}\n\
         fn k() {\n    #[cfg(test)]\n    crate::report::k();\n}\n",
    )
    .unwrap();
    std::fs::write(src.join("report/mod.rs"), "use crate::sys::x;\n").unwrap();
    let found = violations(&src, &read_map(PLANTED_MAP));
    assert_eq!(
        found,
        [
            "src/sys/fine.rs:1: sys (layer 0) imports report (layer 6): climbs",
            "src/sys/fine.rs:2: sys (layer 0) imports report (layer 6): climbs",
            "src/sys/fine.rs:3: sys (layer 0) imports report (layer 6): climbs",
        ]
    );
}

/// A synthetic architecture document for the planted trees.
const PLANTED_MAP: &str = "\
## Layers
| layer | modules | owns | must not know |
|---|---|---|---|
| 0 | `sys/` | syscalls | all |
| 6 | `report/`, `export.rs` | pages | studies |

### Neighbours within a layer
| from | to | why |
|---|---|---|
| `export` | `report` | reasons |
";

#[test]
fn the_document_tables_give_each_module_its_layer_and_each_neighbour_its_reason() {
    let map = read_map(PLANTED_MAP);
    let layers: Vec<(&str, u32)> = map.layers.iter().map(|(m, l)| (m.as_str(), *l)).collect();
    assert_eq!(layers, [("export", 6), ("report", 6), ("sys", 0)]);
    assert_eq!(
        map.neighbours,
        [("export".into(), "report".into(), "reasons".into())]
    );
}

#[test]
fn a_planted_import_that_climbs_fails_against_the_documents_layers() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("sys")).unwrap();
    std::fs::create_dir_all(src.join("report")).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "pub mod sys;\npub mod report;\npub mod export;\n",
    )
    .unwrap();
    std::fs::write(src.join("sys/mod.rs"), "pub fn f() {}\n").unwrap();
    std::fs::write(src.join("report/mod.rs"), "use crate::sys::f;\n").unwrap();
    // A listed neighbour passes; the same import the other way crosses its own layer.
    std::fs::write(src.join("export.rs"), "use crate::report::x;\n").unwrap();
    assert!(violations(&src, &read_map(PLANTED_MAP)).is_empty());
    std::fs::write(
        src.join("report/mod.rs"),
        "use crate::{sys::f, export::g};\n",
    )
    .unwrap();
    std::fs::write(src.join("sys/mod.rs"), "use crate::report::y;\n").unwrap();
    assert_eq!(
        violations(&src, &read_map(PLANTED_MAP)),
        [
            "src/report/mod.rs:1: report (layer 6) imports export (layer 6): crosses its own layer",
            "src/sys/mod.rs:1: sys (layer 0) imports report (layer 6): climbs",
        ]
    );
}

#[test]
fn no_two_files_of_a_folder_import_each_other_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = circles::folder_circles(&src, circles::ALLOWED);
    assert!(
        found.is_empty(),
        "{} circle(s) inside folders (see docs/ARCHITECTURE.md):\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn a_planted_circle_inside_a_folder_fails_and_a_stale_allowance_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("sys/ring")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod sys;\n").unwrap();
    // mod.rs items are no edge; a shared vocabulary file is imported one way only.
    std::fs::write(
        src.join("sys/mod.rs"),
        "mod a;\nmod b;\nmod words;\nmod ring;\n",
    )
    .unwrap();
    std::fs::write(src.join("sys/words.rs"), "use super::Shared;\n").unwrap();
    std::fs::write(src.join("sys/a.rs"), "use super::{words::W, Shared};\n").unwrap();
    std::fs::write(
        src.join("sys/b.rs"),
        "use crate::sys::words::W;\n#[cfg(test)]\nmod tests { use super::super::a::x; }\n",
    )
    .unwrap();
    std::fs::write(src.join("sys/ring/mod.rs"), "mod c;\n").unwrap();
    std::fs::write(src.join("sys/ring/c.rs"), "use super::super::b::y;\n").unwrap();
    assert!(circles::folder_circles(&src, &[]).is_empty());
    // The planted import closes a circle a -> b -> a (b's test module does not count).
    std::fs::write(
        src.join("sys/b.rs"),
        "use crate::sys::{a::{self, x}, words::W};\n",
    )
    .unwrap();
    std::fs::write(src.join("sys/a.rs"), "fn f() { super::b::g(); }\n").unwrap();
    assert_eq!(
        circles::folder_circles(&src, &[]),
        ["src/sys/: a, b import each other in a circle: \
          a -> b (src/sys/a.rs:1); b -> a (src/sys/b.rs:1)"]
    );
    let allowed: &[(&str, &[&str], &str)] = &[("sys", &["a", "b"], "why"), ("sys", &["c"], "x")];
    assert_eq!(
        circles::folder_circles(&src, allowed),
        ["src/sys/: the allowed circle [\"c\"] is gone; remove its entry"]
    );
}

//! The layers of ARCHITECTURE.md, held by a test (as import-linter and ArchUnit do): every
//! `crate::` path in `src/` outside `#[cfg(test)]` items, every `super::` that climbs out of
//! its top-level module, and every `bytepath::` path of `main.rs` must name a module of a lower
//! layer, or one of the few same-layer neighbours listed with its reason. Each import that
//! climbs is printed with its file, line and edge. The layers and neighbours are read from the
//! tables of docs/ARCHITECTURE.md, so the test and the document cannot disagree: a new
//! top-level module needs a place in that document's layer table.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "layers/circles.rs"]
mod circles;

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

/// Comments and the contents of string and char literals blanked (newlines kept), so paths
/// in them are not read as imports.
fn strip(text: &str) -> Vec<char> {
    let c: Vec<char> = text.chars().collect();
    let mut out = c.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for ch in out.iter_mut().take(to).skip(from) {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
    };
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            let end = (i..c.len()).find(|&j| c[j] == '\n').unwrap_or(c.len());
            blank(&mut out, i, end);
            i = end;
        } else if c[i] == '/' && next == Some('*') {
            let (mut depth, mut j) = (1, i + 2);
            while j < c.len() && depth > 0 {
                if c[j] == '/' && c.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 1;
                } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 1;
                }
                j += 1;
            }
            blank(&mut out, i, j);
            i = j;
        } else if c[i] == 'r'
            && (i == 0 || !ident(c[i - 1]) || c[i - 1] == 'b')
            && matches!(next, Some('"') | Some('#'))
        {
            // A raw string: r"…", r#"…"#, br"…".
            let mut j = i + 1;
            let mut hashes = 0;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if c.get(j) != Some(&'"') {
                i += 1;
                continue;
            }
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let mut k = j + 1;
            while k < c.len() && c[k..].iter().take(close.len()).ne(close.iter()) {
                k += 1;
            }
            blank(&mut out, j + 1, k);
            i = k + close.len();
        } else if c[i] == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1, j);
            i = j + 1;
        } else if c[i] == '\'' {
            // A char literal ('x', '\n', '\u{…}'), or else a lifetime.
            let end = if next == Some('\\') {
                (i + 2..c.len()).find(|&j| c[j] == '\'')
            } else {
                (c.get(i + 2) == Some(&'\'')).then_some(i + 2)
            };
            match end {
                Some(end) => {
                    blank(&mut out, i + 1, end);
                    i = end + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    out
}

/// A test-only module file a `#[cfg(test)] mod x;` declares: by its name, or by its
/// `#[path = "…"]` (relative to the declaring file's folder).
enum TestFile {
    Named(String),
    Path(String),
}

/// Blanks every `#[cfg(test)]` item (a module, function, field, statement or `mod x;`) and
/// returns the test-only module files it declares. `original` is the text before `strip`
/// (same positions), for the value of a `#[path]`.
fn drop_test_items(c: &mut [char], original: &[char]) -> Vec<TestFile> {
    let text: String = c.iter().collect();
    let mut files = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("#[cfg(test)]").map(|p| p + from) {
        let start = text[..at].chars().count();
        let mut i = start + "#[cfg(test)]".len();
        // Further attributes on the same item.
        let mut path = None;
        loop {
            while i < c.len() && c[i].is_whitespace() {
                i += 1;
            }
            if c.get(i) == Some(&'#') {
                let from = i;
                while i < c.len() && c[i] != ']' {
                    i += 1;
                }
                i += 1;
                let attribute: String = original[from..i].iter().collect();
                if let Some(value) = attribute
                    .strip_prefix("#[path")
                    .and_then(|rest| rest.split('"').nth(1))
                {
                    path = Some(value.to_string());
                }
            } else {
                break;
            }
        }
        let item_start = i;
        let (mut round, mut square) = (0i32, 0i32);
        let end = loop {
            let Some(&ch) = c.get(i) else { break c.len() };
            match ch {
                '(' => round += 1,
                ')' => round -= 1,
                '[' => square += 1,
                ']' => square -= 1,
                ';' if round == 0 && square == 0 => break i + 1,
                ',' if round == 0 && square == 0 => break i + 1,
                '{' => {
                    let mut depth = 0;
                    while i < c.len() {
                        match c[i] {
                            '{' => depth += 1,
                            '}' => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                    break i + 1;
                }
                _ => {}
            }
            i += 1;
        };
        let item: String = c[item_start..end.min(c.len())].iter().collect();
        let words: Vec<&str> = item
            .split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        if item.trim_end().ends_with(';') {
            if let Some(at) = words.iter().position(|w| *w == "mod") {
                match (&path, words.get(at + 1)) {
                    (Some(path), _) => files.push(TestFile::Path(path.clone())),
                    (None, Some(name)) => files.push(TestFile::Named(name.to_string())),
                    (None, None) => {}
                }
            }
        }
        let stop = end.min(c.len());
        for ch in c.iter_mut().take(stop).skip(start) {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
        from = text
            .char_indices()
            .nth(end.min(c.len()))
            .map_or(text.len(), |(b, _)| b);
    }
    files
}

/// The top-level names a path names after its root (`crate::` or climbing `super::`s): one
/// identifier, or each entry of a `{…}` group.
fn roots_after(c: &[char], mut i: usize) -> Vec<String> {
    while i < c.len() && c[i].is_whitespace() {
        i += 1;
    }
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    if c.get(i) == Some(&'{') {
        let mut names = Vec::new();
        let (mut depth, mut j, mut entry) = (0, i, String::new());
        while j < c.len() {
            match c[j] {
                '{' => {
                    depth += 1;
                    if depth > 1 {
                        entry.push('{');
                    }
                }
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        names.push(entry.clone());
                        break;
                    }
                    entry.push('}');
                }
                ',' if depth == 1 => names.push(std::mem::take(&mut entry)),
                ch => entry.push(ch),
            }
            j += 1;
        }
        return names
            .iter()
            .filter_map(|e| {
                let first: String = e.trim().chars().take_while(|&ch| ident(ch)).collect();
                (!first.is_empty() && first != "self").then_some(first)
            })
            .collect();
    }
    let name: String = c[i..].iter().take_while(|&&ch| ident(ch)).collect();
    if name.is_empty() {
        Vec::new()
    } else {
        vec![name]
    }
}

/// Each position's count of enclosing inline `mod x { … }` blocks.
fn inline_depths(c: &[char]) -> Vec<usize> {
    let words = c;
    let mut depths = vec![0; c.len()];
    let mut opened: Vec<i32> = Vec::new();
    let mut brace = 0i32;
    let mut pending_mod = false;
    let mut i = 0;
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < words.len() {
        let ch = words[i];
        if ident(ch) && (i == 0 || !ident(words[i - 1])) {
            let word: String = words[i..].iter().take_while(|&&w| ident(w)).collect();
            if word == "mod" {
                pending_mod = true;
            }
            for d in depths.iter_mut().skip(i).take(word.chars().count()) {
                *d = opened.len();
            }
            i += word.chars().count();
            continue;
        }
        match ch {
            '{' => {
                brace += 1;
                if pending_mod {
                    opened.push(brace);
                    pending_mod = false;
                }
            }
            '}' => {
                if opened.last() == Some(&brace) {
                    opened.pop();
                }
                brace -= 1;
            }
            ';' => pending_mod = false,
            _ => {}
        }
        depths[i] = opened.len();
        i += 1;
    }
    depths
}

/// A path one file names, resolved from the crate root (`super::x` in `a/b.rs` -> a::x).
#[derive(Debug, Clone)]
struct Reference {
    file: String,
    line: usize,
    module: Vec<String>,
    target: Vec<String>,
}

/// The paths a path names from `i` on: `a::b`, or each entry of a `{…}` group, nested groups
/// expanded; `self` entries name their prefix, `*` and `as` names are dropped.
fn paths_at(c: &[char], i: &mut usize) -> Vec<Vec<String>> {
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    while *i < c.len() && c[*i].is_whitespace() {
        *i += 1;
    }
    if c.get(*i) == Some(&'{') {
        *i += 1;
        let mut all = Vec::new();
        while *i < c.len() {
            while *i < c.len() && c[*i].is_whitespace() {
                *i += 1;
            }
            if c.get(*i) == Some(&'}') {
                *i += 1;
                break;
            }
            all.extend(paths_at(c, i));
            // What follows an entry up to its end (` as name`).
            while *i < c.len() && c[*i] != ',' && c[*i] != '}' {
                *i += 1;
            }
            if c.get(*i) == Some(&',') {
                *i += 1;
            }
        }
        return all;
    }
    let name: String = c[*i..].iter().take_while(|&&ch| ident(ch)).collect();
    *i += name.chars().count();
    if name.is_empty() {
        return vec![Vec::new()];
    }
    let name = if name == "self" {
        Vec::new()
    } else {
        vec![name]
    };
    if c[*i..].iter().take(2).copied().eq("::".chars()) {
        *i += 2;
        return paths_at(c, i)
            .into_iter()
            .map(|rest| name.iter().cloned().chain(rest).collect())
            .collect();
    }
    vec![name]
}

/// The imports of one file whose module path (from the crate root) is `module`, the paths it
/// names (resolved from the crate root) and the test-only files it declares.
fn imports(
    path: &Path,
    shown: &str,
    module: &[String],
    root: &str,
) -> (Vec<Import>, Vec<Reference>, Vec<TestFile>) {
    let text = std::fs::read_to_string(path).unwrap();
    let original: Vec<char> = text.chars().collect();
    let mut c = strip(&text);
    let test_files = drop_test_items(&mut c, &original);
    let depths = inline_depths(&c);
    let line_of = |i: usize| c[..i].iter().filter(|&&ch| ch == '\n').count() + 1;
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_' || ch == '$';
    let starts = |i: usize, word: &str| {
        c[i..].iter().take(word.len()).copied().eq(word.chars())
            && (i == 0 || !ident(c[i - 1]) && c[i - 1] != ':')
    };
    let from = module[0].clone();
    let mut references = Vec::new();
    let mut refer = |base: &[String], at: usize| {
        let mut j = at;
        for rest in paths_at(&c, &mut j) {
            references.push(Reference {
                file: shown.to_string(),
                line: line_of(at),
                module: module.to_vec(),
                target: base.iter().cloned().chain(rest).collect(),
            });
        }
    };
    let mut found = Vec::new();
    let mut add = |names: Vec<String>, at: usize| {
        for to in names {
            if to != from {
                found.push(Import {
                    file: shown.to_string(),
                    line: line_of(at),
                    from: from.clone(),
                    to,
                });
            }
        }
    };
    let mut i = 0;
    while i < c.len() {
        let root_path = format!("{root}::");
        if starts(i, &root_path) {
            add(roots_after(&c, i + root_path.len()), i);
            if root == "crate" {
                refer(&[], i + root_path.len());
            }
            i += root_path.len();
        } else if starts(i, "super::") {
            let mut j = i;
            let mut climbs = 0;
            while c[j..].iter().take(7).copied().eq("super::".chars()) {
                climbs += 1;
                j += 7;
            }
            if climbs >= module.len() + depths[i] {
                add(roots_after(&c, j), i);
            } else if climbs > depths[i] {
                refer(&module[..module.len() + depths[i] - climbs], j);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    (found, references, test_files)
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
        if rel == Path::new("lib.rs") {
            continue;
        }
        let module = module_of(rel);
        let root = if rel == Path::new("main.rs") {
            "bytepath"
        } else {
            "crate"
        };
        let shown = format!("src/{}", rel.display());
        let (found, named, tests) = imports(path, &shown, &module, root);
        all.extend(found);
        references.extend(named);
        // Where the files of the modules it declares are: beside a mod.rs, else in the folder
        // named after the file.
        let dir = if rel.file_name().is_some_and(|n| n == "mod.rs") {
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
        if rel != Path::new("lib.rs") {
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
fn the_reader_sees_paths_in_groups_and_climbing_supers_but_not_in_strings_or_tests() {
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
        "use crate::{sys, report::{a, b}};\nfn f() { super::super::report::g(); }\n",
    )
    .unwrap();
    std::fs::write(src.join("report/mod.rs"), "use crate::sys::x;\n").unwrap();
    let found = violations(&src, &read_map(PLANTED_MAP));
    assert_eq!(
        found,
        [
            "src/sys/fine.rs:1: sys (layer 0) imports report (layer 6): climbs",
            "src/sys/fine.rs:2: sys (layer 0) imports report (layer 6): climbs",
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

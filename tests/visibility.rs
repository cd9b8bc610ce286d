//! Internal submodules are `pub(crate)` or private (docs/ARCHITECTURE.md, "Visibility"): a
//! submodule is `pub` only when something outside the library — the binary (`src/main.rs`),
//! the integration tests or the examples — names it in a path. The compiler cannot say this
//! (a `pub` item nobody outside uses is not dead code), so this test reads the sources: every
//! `pub mod name;` below the crate root must begin a path one of those files names (through
//! `bytepath::…`, a `use` group, or a module a `use` brought into scope).
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The `pub mod` declarations of `source` (one per line, as rustfmt writes them).
fn public_submodules(source: &str) -> Vec<String> {
    source
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod ")?.strip_suffix(';'))
        .map(str::to_string)
        .collect()
}

/// Splits source text into the tokens a path is made of: words, `::` and single marks.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut i = 0;
    let bytes = text.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < bytes.len() {
        let start = i;
        if word(bytes[i]) {
            while i < bytes.len() && word(bytes[i]) {
                i += 1;
            }
        } else if text[i..].starts_with("::") {
            i += 2;
        } else if bytes[i].is_ascii_whitespace() {
            i += 1;
            continue;
        } else {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
        }
        out.push(&text[start..i]);
    }
    out
}

/// Reads one path or use-tree from `t[i..]` after `prefix`, adding every full path it names
/// to `out`; returns the index after it.
fn use_tree(t: &[&str], mut i: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix.to_vec();
    while i < t.len() {
        match t[i] {
            "{" => {
                i += 1;
                while i < t.len() && t[i] != "}" {
                    i = use_tree(t, i, &path, out);
                    if t.get(i) == Some(&",") {
                        i += 1;
                    }
                }
                out.push(path);
                return i + 1;
            }
            "self" => i += 1,
            w if w.chars().all(|c| c.is_alphanumeric() || c == '_') && w != "as" => {
                path.push(w.to_string());
                i += 1;
                if t.get(i) == Some(&"::") {
                    i += 1;
                    continue;
                }
                break;
            }
            _ => break,
        }
    }
    out.push(path);
    i
}

/// Every library path `text` names: `bytepath::…` paths and use-trees, and paths that go on
/// from a name such a `use` brought into scope (`use bytepath::args;` … `args::run::command`).
fn library_paths(text: &str) -> Vec<Vec<String>> {
    let t = tokens(text);
    let mut found = Vec::new();
    for i in 0..t.len() {
        if t[i] == "bytepath" && t.get(i + 1) == Some(&"::") {
            use_tree(&t, i + 2, &[], &mut found);
        }
    }
    let mut more = Vec::new();
    for path in found.iter().filter(|p| !p.is_empty()) {
        let last = path.last().unwrap().as_str();
        for i in 0..t.len() {
            let starts = i == 0 || t[i - 1] != "::";
            if starts && t[i] == last && t.get(i + 1) == Some(&"::") {
                use_tree(&t, i + 2, path, &mut more);
            }
        }
    }
    found.extend(more);
    found
}

/// The module path of a library file (`src/a/b.rs` and `src/a/b/mod.rs` are `a::b`).
fn module_of(file: &str) -> Vec<String> {
    let rel = file.split("src/").last().unwrap().trim_end_matches(".rs");
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// `pub mod` declarations below the root that no outside file names: (file, module).
fn needlessly_public(library: &[(String, String)], outside: &[String]) -> Vec<(String, String)> {
    let named: Vec<Vec<String>> = outside.iter().flat_map(|t| library_paths(t)).collect();
    library
        .iter()
        .flat_map(|(file, source)| {
            public_submodules(source)
                .into_iter()
                .map(move |m| (file.clone(), m))
        })
        .filter(|(file, m)| {
            let mut full = module_of(file);
            full.push(m.clone());
            !named.iter().any(|p| p.starts_with(&full))
        })
        .collect()
}

fn read(paths: &[PathBuf]) -> Vec<(String, String)> {
    paths
        .iter()
        .map(|p| (p.display().to_string(), std::fs::read_to_string(p).unwrap()))
        .collect()
}

#[test]
fn every_public_submodule_is_named_outside_the_library() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut library = Vec::new();
    rust_files(&root.join("src"), &mut library);
    library.retain(|p| !p.ends_with("src/lib.rs") && !p.ends_with("src/main.rs"));
    let mut outside = vec![root.join("src/main.rs")];
    rust_files(&root.join("tests"), &mut outside);
    rust_files(&root.join("examples"), &mut outside);
    let outside: Vec<String> = read(&outside).into_iter().map(|(_, s)| s).collect();
    let found = needlessly_public(&read(&library), &outside);
    assert!(
        found.is_empty(),
        "pub submodules nothing outside the library names (make them pub(crate)): {found:?}"
    );
}

#[test]
fn a_planted_public_module_nobody_names_is_found_and_a_named_one_is_not() {
    let library = vec![
        (
            "src/a/mod.rs".to_string(),
            "pub mod used;\npub mod grouped;\npub mod lonely;\npub(crate) mod inner;\n".to_string(),
        ),
        ("src/b.rs".to_string(), "pub mod lonely;\n".to_string()),
    ];
    let outside = vec![
        "use bytepath::a::{self, grouped::{f, g}, other};\nfn f() { a::used::go(); }".to_string(),
        "use bytepath::b;\nfn h() { b::lonely::x(); let lonely = 1; }".to_string(),
    ];
    assert_eq!(
        needlessly_public(&library, &outside),
        vec![("src/a/mod.rs".to_string(), "lonely".to_string())]
    );
}

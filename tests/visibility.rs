//! Internal submodules are `pub(crate)` or private (docs/ARCHITECTURE.md, "Visibility"): a
//! submodule is `pub` only when something outside the library — the binary (`src/main.rs`),
//! the integration tests or the examples — names it in a path. The compiler cannot say this
//! (a `pub` item nobody outside uses is not dead code), so this test reads the sources: every
//! `pub mod name;` below the crate root must begin a path one of those files names (through
//! `bytepath::…`, a `use` group, or a module a `use` brought into scope), read with `syn`
//! (tests/rust_paths), so a path in a string or comment names nothing.
mod rust_paths;

use std::collections::BTreeMap;
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

/// The `pub mod name;` declarations of a library file.
fn public_submodules(source: &str) -> Vec<String> {
    let file = syn::parse_file(source).unwrap();
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m)
                if m.content.is_none() && matches!(m.vis, syn::Visibility::Public(_)) =>
            {
                Some(m.ident.to_string())
            }
            _ => None,
        })
        .collect()
}

/// Every library path `text` names: `bytepath::…` paths, and paths that go on from a name a
/// `use bytepath::…` brought into scope (`use bytepath::args;` … `args::run::command`).
fn library_paths(text: &str) -> Vec<Vec<String>> {
    let named = rust_paths::read(text, false).unwrap().named;
    let in_scope: BTreeMap<&str, &[String]> = named
        .iter()
        .filter(|n| n.segments.first().is_some_and(|s| s == "bytepath"))
        .filter_map(|n| Some((n.binds.as_deref()?, &n.segments[1..])))
        .collect();
    named
        .iter()
        .filter_map(|n| {
            let (first, rest) = n.segments.split_first()?;
            let base = match first.as_str() {
                "bytepath" => &[][..],
                name => in_scope.get(name)?,
            };
            Some([base, rest].concat())
        })
        .collect()
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
        "use bytepath::a::{self, grouped::{f, g}, other};\nfn f() { assert!(a::used::go()); }"
            .to_string(),
        "use bytepath::b;\nfn h() { b::lonely::x(); let lonely = \"bytepath::a::lonely\"; }"
            .to_string(),
    ];
    assert_eq!(
        needlessly_public(&library, &outside),
        vec![("src/a/mod.rs".to_string(), "lonely".to_string())]
    );
}

//! No circle inside a folder: the sibling submodules of one module (the files of a folder) do
//! not import each other in a circle. An edge is a path a file names (`super::b::x`,
//! `crate::a::b::x`, outside `#[cfg(test)]`) that leads from one sibling into another; a path to
//! an item of the folder's own `mod.rs` is no edge, so vocabulary two siblings share belongs in
//! a file of its own (or in `mod.rs`). The circles are the strongly connected components of
//! each folder's graph with two or more members.
use super::{module_of, scan, Reference};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The circles still open, allowed for now with who breaks them: (folder, members, reason).
/// None is open: src/remote/'s were broken in issue 26 (frame no longer reads messages, the
/// session vocabulary is `session.rs`, the file and peer runs are the server's own files). An
/// entry that no longer matches a circle fails the test, to say so.
pub const ALLOWED: &[(&str, &[&str], &str)] = &[];

/// A path from one sibling into another, with where it is written.
struct Edge {
    from: String,
    to: String,
    at: String,
}

/// Every module path of the tree (each file's, and each of their prefixes).
fn module_paths(src: &Path, files: &[std::path::PathBuf]) -> BTreeSet<Vec<String>> {
    let mut all = BTreeSet::new();
    for path in files {
        let rel = path.strip_prefix(src).unwrap();
        if rel == Path::new("lib.rs") || rel == Path::new("main.rs") {
            continue;
        }
        let module = module_of(rel);
        for end in 1..=module.len() {
            all.insert(module[..end].to_vec());
        }
    }
    all
}

/// The edges between siblings, by folder (the module path of their parent).
fn sibling_edges(
    references: &[Reference],
    modules: &BTreeSet<Vec<String>>,
) -> BTreeMap<Vec<String>, Vec<Edge>> {
    let mut folders: BTreeMap<Vec<String>, Vec<Edge>> = BTreeMap::new();
    for r in references {
        let common = r
            .module
            .iter()
            .zip(&r.target)
            .take_while(|(a, b)| a == b)
            .count();
        // Within a top-level module only (climbing out is the layers' business), and only
        // from one sibling into another module beside it.
        if common == 0 || common >= r.module.len() || common >= r.target.len() {
            continue;
        }
        if !modules.contains(&r.target[..=common].to_vec()) {
            continue;
        }
        folders
            .entry(r.module[..common].to_vec())
            .or_default()
            .push(Edge {
                from: r.module[common].clone(),
                to: r.target[common].clone(),
                at: format!("{}:{}", r.file, r.line),
            });
    }
    folders
}

/// The strongly connected components of two or more members, each sorted.
fn components(edges: &[Edge]) -> Vec<Vec<String>> {
    let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for e in edges {
        next.entry(&e.from).or_default().insert(&e.to);
        next.entry(&e.to).or_default();
    }
    let reach = |start: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![start];
        while let Some(n) = stack.pop() {
            for &m in &next[n] {
                if seen.insert(m) {
                    stack.push(m);
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&str, BTreeSet<&str>> = next.keys().map(|&n| (n, reach(n))).collect();
    let mut found = BTreeSet::new();
    for (&a, from_a) in &reaches {
        let members: Vec<String> = from_a
            .iter()
            .filter(|&&b| reaches[b].contains(a))
            .map(|b| b.to_string())
            .collect();
        if members.len() >= 2 {
            found.insert(members);
        }
    }
    found.into_iter().collect()
}

/// Each circle inside a folder of `src` that `allowed` does not cover, as a line naming the
/// folder, its members and the edges between them; and each allowed entry that covers none.
pub fn folder_circles(src: &Path, allowed: &[(&str, &[&str], &str)]) -> Vec<String> {
    let scan = scan(src);
    let modules = module_paths(src, &scan.files);
    let references: Vec<Reference> = scan
        .references
        .into_iter()
        .filter(|r| !scan.test_only.contains(&r.file))
        .collect();
    let mut out = Vec::new();
    let mut used = BTreeSet::new();
    for (folder, edges) in sibling_edges(&references, &modules) {
        let shown = folder.join("/");
        for members in components(&edges) {
            let cover = allowed.iter().position(|(f, m, _)| {
                *f == shown && members.iter().all(|x| m.contains(&x.as_str()))
            });
            if let Some(entry) = cover {
                used.insert(entry);
                continue;
            }
            let mut seen = BTreeSet::new();
            let witnesses: Vec<String> = edges
                .iter()
                .filter(|e| members.contains(&e.from) && members.contains(&e.to))
                .filter(|e| seen.insert((e.from.clone(), e.to.clone())))
                .map(|e| format!("{} -> {} ({})", e.from, e.to, e.at))
                .collect();
            out.push(format!(
                "src/{shown}/: {} import each other in a circle: {}",
                members.join(", "),
                witnesses.join("; ")
            ));
        }
    }
    for (i, (folder, members, _)) in allowed.iter().enumerate() {
        if !used.contains(&i) {
            out.push(format!(
                "src/{folder}/: the allowed circle {members:?} is gone; remove its entry"
            ));
        }
    }
    out
}

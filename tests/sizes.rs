//! Sizes, held by a test: a file of `src/` holds at most 500 lines outside its tests, and a
//! function at most 60 (docs/ARCHITECTURE.md, "Sizes"). Read with `syn`: a file's lines are
//! counted without its `#[cfg(test)]` modules (`*_tests.rs` and `tests.rs` files are tests),
//! and a function's lines run from its signature to its closing brace, its doc comment and
//! attributes left out; functions inside test-only items are not measured.
use std::path::{Path, PathBuf};
use syn::spanned::Spanned;
use syn::visit::{self, Visit};

const MAX_FILE_LINES: usize = 500;
const MAX_FUNCTION_LINES: usize = 60;

/// Whether attributes put an item out of the build outside tests: `#[cfg(test)]` or `#[test]`.
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("test")
            || (attr.path().is_ident("cfg")
                && attr
                    .parse_args::<syn::Ident>()
                    .is_ok_and(|ident| ident == "test"))
    })
}

/// The functions of one file longer than the limit, and the lines its test modules take.
#[derive(Default)]
struct Measured {
    long_functions: Vec<(String, usize, usize)>,
    test_lines: usize,
}

impl Measured {
    fn function(&mut self, name: &syn::Ident, signature: &syn::Signature, block: &syn::Block) {
        let start = signature.span().start().line;
        let end = block.span().end().line;
        let lines = end + 1 - start;
        if lines > MAX_FUNCTION_LINES {
            self.long_functions.push((name.to_string(), start, lines));
        }
    }
}

impl<'ast> Visit<'ast> for Measured {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Trait(t) => &t.attrs,
            _ => &[],
        };
        if is_test_only(attrs) {
            if let syn::Item::Mod(m) = item {
                if m.content.is_some() {
                    let span = m.span();
                    self.test_lines += span.end().line + 1 - span.start().line;
                }
            }
            return;
        }
        visit::visit_item(self, item);
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.function(&f.sig.ident, &f.sig, &f.block);
        visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if is_test_only(&f.attrs) {
            return;
        }
        self.function(&f.sig.ident, &f.sig, &f.block);
        visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.function(&f.sig.ident, &f.sig, block);
        }
        visit::visit_trait_item_fn(self, f);
    }
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

fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    name.ends_with("_tests.rs") || name == "tests.rs"
}

/// What `text` breaks of the limits, one line each (`file` names it).
fn over_the_limits(file: &str, text: &str) -> Vec<String> {
    let syntax = syn::parse_file(text).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut measured = Measured::default();
    measured.visit_file(&syntax);
    let mut found = Vec::new();
    let lines = text.lines().count() - measured.test_lines;
    if lines > MAX_FILE_LINES {
        found.push(format!(
            "{file}: {lines} lines outside its tests (at most {MAX_FILE_LINES})"
        ));
    }
    for (name, line, lines) in measured.long_functions {
        found.push(format!(
            "{file}:{line}: fn {name} is {lines} lines (at most {MAX_FUNCTION_LINES})"
        ));
    }
    found
}

#[test]
fn no_file_is_over_500_lines_and_no_function_over_60_outside_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut found = Vec::new();
    for path in files.iter().filter(|p| !is_test_file(p)) {
        let file = path.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(path).unwrap();
        found.extend(over_the_limits(&file, &text));
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    assert!(files.len() > 300, "src/ was read ({} files)", files.len());
}

#[test]
fn a_long_function_and_a_long_file_are_found_and_tests_are_not_counted() {
    let body = "    let x = 1;\n".repeat(MAX_FUNCTION_LINES);
    let long = format!("/// A doc line.\nfn long() {{\n{body}}}\n");
    let found = over_the_limits("planted.rs", &long);
    assert_eq!(
        found,
        [format!(
            "planted.rs:2: fn long is {} lines (at most {MAX_FUNCTION_LINES})",
            MAX_FUNCTION_LINES + 2
        )]
    );
    let method = format!("struct S;\nimpl S {{\n    fn long(&self) {{\n{body}    }}\n}}\n");
    assert_eq!(over_the_limits("m.rs", &method).len(), 1);
    let tested = format!("#[cfg(test)]\nmod tests {{\n    fn long() {{\n{body}    }}\n}}\n");
    assert!(over_the_limits("t.rs", &tested).is_empty());
    let filler = "const A: u8 = 0;\n".repeat(MAX_FILE_LINES);
    assert_eq!(over_the_limits("f.rs", &format!("{filler}\n")).len(), 1);
    let with_tests = format!("{filler}{tested}");
    assert!(over_the_limits("g.rs", &with_tests).is_empty());
}

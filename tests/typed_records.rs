//! Typed records, held by a test: every record and folder file is read through its serde type,
//! and JSON is read by string key only in the schema-compat module (`src/record/compat.rs`),
//! which upgrades old schema versions into the current types. This test parses every file of
//! `src/` with `syn` (so strings and comments never count) and counts the string-key reads
//! outside `#[cfg(test)]` items, `#[test]` functions, `*_tests.rs` files and the compat module:
//! `value["key"]`, `.get("key")`, `.get_mut("key")` and `.pointer("/key")`. The count must be
//! zero; each read left is printed with its file and line, file by file.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::visit::Visit;

/// The one module allowed to read JSON by string key, relative to the crate root.
const COMPAT_MODULE: &str = "src/record/compat.rs";

/// The methods that read a JSON value by a key given as a string literal.
const KEYED_METHODS: &[&str] = &["get", "get_mut", "pointer", "pointer_mut"];

/// Whether attributes put an item out of the build outside tests: `#[cfg(test)]` or `#[test]`.
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        if attr.path().is_ident("test") {
            return true;
        }
        if !attr.path().is_ident("cfg") {
            return false;
        }
        attr.parse_args::<syn::Ident>()
            .map(|ident| ident == "test")
            .unwrap_or(false)
    })
}

fn is_string_literal(expr: &syn::Expr) -> bool {
    matches!(
        expr,
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(_),
            ..
        })
    )
}

/// Collects the line of each string-key read in one file's syntax tree.
#[derive(Default)]
struct KeyedReads {
    lines: Vec<usize>,
}

impl KeyedReads {
    /// The string-key reads inside a macro's tokens, which syn leaves unparsed: an indexing
    /// `x["key"]` (a bracket group holding one string literal right after a name or a group)
    /// and `.get("key")` (a dot, a keyed method's name, then parentheses opening with a string
    /// literal). Nested groups are searched too.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, tree) in trees.iter().enumerate() {
            let TokenTree::Group(group) = tree else {
                continue;
            };
            let inner: Vec<TokenTree> = group.stream().into_iter().collect();
            let opens_with_string = matches!(inner.first(), Some(TokenTree::Literal(l)) if l.to_string().starts_with('"'));
            let previous = i.checked_sub(1).map(|p| &trees[p]);
            let is_index = group.delimiter() == Delimiter::Bracket
                && inner.len() == 1
                && opens_with_string
                && matches!(previous, Some(TokenTree::Ident(_) | TokenTree::Group(_)));
            let is_keyed_call = group.delimiter() == Delimiter::Parenthesis
                && opens_with_string
                && matches!(previous, Some(TokenTree::Ident(name)) if KEYED_METHODS.contains(&name.to_string().as_str()))
                && matches!(i.checked_sub(2).map(|p| &trees[p]), Some(TokenTree::Punct(dot)) if dot.as_char() == '.');
            if is_index || is_keyed_call {
                self.lines.push(group.span().start().line);
            }
            self.scan_tokens(group.stream());
        }
    }
}

impl<'ast> Visit<'ast> for KeyedReads {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Trait(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            _ => &[],
        };
        if !is_test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, function: &'ast syn::ImplItemFn) {
        if !is_test_only(&function.attrs) {
            syn::visit::visit_impl_item_fn(self, function);
        }
    }

    fn visit_expr_index(&mut self, index: &'ast syn::ExprIndex) {
        if is_string_literal(&index.index) {
            self.lines.push(index.index.span().start().line);
        }
        syn::visit::visit_expr_index(self, index);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let keyed = KEYED_METHODS.iter().any(|m| call.method == m);
        if keyed && call.args.first().is_some_and(is_string_literal) {
            self.lines.push(call.method.span().start().line);
        }
        syn::visit::visit_expr_method_call(self, call);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.scan_tokens(mac.tokens.clone());
    }
}

/// The lines of the string-key reads of one Rust source text, outside test-only items.
fn keyed_read_lines(source: &str) -> Vec<usize> {
    let file = syn::parse_file(source).expect("the source parses as Rust");
    let mut reads = KeyedReads::default();
    reads.visit_file(&file);
    reads.lines.sort_unstable();
    reads.lines
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// Each file of `src/` (tests and the compat module aside) with the lines of its reads.
fn keyed_reads_in_src() -> BTreeMap<String, Vec<usize>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut reads = BTreeMap::new();
    for path in files {
        let relative = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if relative == COMPAT_MODULE || relative.ends_with("_tests.rs") {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("a source file is readable");
        let lines = keyed_read_lines(&source);
        if !lines.is_empty() {
            reads.insert(relative, lines);
        }
    }
    reads
}

#[test]
fn json_is_read_by_string_key_only_in_the_compat_module() {
    assert!(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(COMPAT_MODULE)
            .is_file(),
        "{COMPAT_MODULE} is gone: move this test's allowance to where old schemas are read"
    );
    let reads = keyed_reads_in_src();
    let total: usize = reads.values().map(Vec::len).sum();
    let listing: String = reads
        .iter()
        .map(|(file, lines)| format!("  {file}: {} at lines {lines:?}\n", lines.len()))
        .collect();
    assert_eq!(
        total, 0,
        "{total} string-key JSON reads outside {COMPAT_MODULE}; read through the record's serde \
         type instead (or upgrade an old schema in the compat module):\n{listing}"
    );
}

#[test]
fn the_counter_finds_each_form_of_string_key_read() {
    let source = r#"
        fn f(v: &serde_json::Value, m: &mut serde_json::Value) {
            let a = &v["schema_version"];
            let b = v.get("points");
            let c = m.get_mut("visits");
            let d = v.pointer("/spec/mode");
            println!("{}", v["name"]);
            let e = serde_json::json!({ "k": v.get("x"), "list": ["only"] });
        }
    "#;
    assert_eq!(keyed_read_lines(source), vec![3, 4, 5, 6, 7, 8]);
}

#[test]
fn the_counter_ignores_strings_comments_other_keys_and_tests() {
    let source = r##"
        // v["in a comment"] and v.get("in a comment")
        /// v["in a doc comment"]
        fn f(v: &serde_json::Value, key: &str, list: &[u8]) {
            let text = "v[\"in a string\"] v.get(\"x\")";
            let raw = r#"v["in a raw string"]"#;
            let by_name = v.get(key);
            let by_number = &list[0];
            let typed = serde_json::json!({ "k": ["x"], "arr": ["a", "b"] });
            let m = vec!["x"];
        }
        #[cfg(test)]
        mod tests {
            fn g(v: &serde_json::Value) { let _ = &v["in a test module"]; }
        }
        #[test]
        fn h(v: &serde_json::Value) { let _ = v.get("in a test"); }
        impl S {
            #[cfg(test)]
            fn only_in_tests(v: &serde_json::Value) { let _ = v.pointer("/x"); }
        }
    "##;
    assert_eq!(keyed_read_lines(source), Vec::<usize>::new());
}

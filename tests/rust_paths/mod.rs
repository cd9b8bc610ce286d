//! The paths a Rust file names, read with `syn` (for the layers and visibility tests): each
//! path in code and types, each leaf of a `use` tree with the name it brings into scope, and
//! each path written in a macro's arguments (`format!("{}", super::study::ORDER)`), with its
//! line and the inline modules around it. Comments, strings and doc text name no path. Read
//! without tests, whatever `#[cfg(test)]` marks (an item, field, variant, statement, match arm
//! or expression) is left out, and the module files such items declare are listed.
#![allow(dead_code)]
use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::visit::{self, Visit};
use syn::{Attribute, Expr, ImplItem, Item, TraitItem, UseTree};

/// A path as written: `super`, `crate` and `self` included, generic arguments left out.
#[derive(Debug)]
pub struct Named {
    pub segments: Vec<String>,
    pub line: usize,
    /// The inline `mod x { … }` blocks around it, outermost first.
    pub inline: Vec<String>,
    /// For a leaf of a `use` tree, the name it brings into scope (`a` for `use x::a;`, `b` for
    /// `use x::a as b;`, `x` for `use x::{self};`, `y` for `use x::{self as y};`; none for a
    /// glob).
    pub binds: Option<String>,
}

/// A test-only module file a `#[cfg(test)] mod x;` declares: by its name, or by its
/// `#[path = "…"]` (relative to the declaring file's folder).
pub enum TestFile {
    Named(String),
    Path(String),
}

#[derive(Default)]
pub struct Source {
    pub named: Vec<Named>,
    pub test_files: Vec<TestFile>,
}

/// The paths `text` names; `without_tests` leaves out what `#[cfg(test)]` marks.
pub fn read(text: &str, without_tests: bool) -> syn::Result<Source> {
    let file = syn::parse_file(text)?;
    let mut walker = Walker {
        without_tests,
        inline: Vec::new(),
        source: Source::default(),
    };
    walker.visit_file(&file);
    Ok(walker.source)
}

struct Walker {
    without_tests: bool,
    inline: Vec<String>,
    source: Source,
}

fn is_cfg_test(attr: &Attribute) -> bool {
    attr.path().is_ident("cfg")
        && attr
            .meta
            .require_list()
            .is_ok_and(|list| list.tokens.to_string() == "test")
}

/// The `#[path = "…"]` of a module, if it has one.
fn path_attribute(attrs: &[Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

impl Walker {
    fn name(&mut self, segments: Vec<String>, line: usize, binds: Option<String>) {
        self.source.named.push(Named {
            segments,
            line,
            inline: self.inline.clone(),
            binds,
        });
    }

    /// Whether a node with `attrs` is left out: `#[cfg(test)]` when reading without tests.
    fn leaves_out(&self, attrs: &[Attribute]) -> bool {
        self.without_tests && attrs.iter().any(is_cfg_test)
    }

    /// Each leaf of a `use` tree below `prefix`, as a path of its own.
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &UseTree) {
        let line = |ident: &syn::Ident| ident.span().start().line;
        match tree {
            UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            UseTree::Name(n) if n.ident == "self" => {
                self.name(prefix.clone(), line(&n.ident), prefix.last().cloned());
            }
            UseTree::Name(n) => {
                let path = [&prefix[..], &[n.ident.to_string()]].concat();
                self.name(path, line(&n.ident), Some(n.ident.to_string()));
            }
            UseTree::Rename(r) => {
                let mut path = prefix.clone();
                if r.ident != "self" {
                    path.push(r.ident.to_string());
                }
                self.name(path, line(&r.ident), Some(r.rename.to_string()));
            }
            UseTree::Glob(g) => self.name(prefix.clone(), g.star_token.span.start().line, None),
            UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(prefix, t)),
        }
    }

    /// The paths in a macro's tokens: each `a::b::c` not itself the tail of another path.
    fn macro_paths(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let colons = |at: usize| {
            matches!((tokens.get(at), tokens.get(at + 1)),
                (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                    if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':')
        };
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(g) => self.macro_paths(g.stream()),
                TokenTree::Ident(first) => {
                    let after_path = i >= 2 && colons(i - 2);
                    let after_dollar = i >= 1
                        && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '$');
                    let mut segments = vec![first.to_string()];
                    while colons(i + 1) {
                        let Some(TokenTree::Ident(next)) = tokens.get(i + 3) else {
                            break;
                        };
                        segments.push(next.to_string());
                        i += 3;
                    }
                    if segments.len() > 1 && !after_path && !after_dollar {
                        self.name(segments, first.span().start().line, None);
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// The attributes of a node whose kinds each carry their own.
macro_rules! attrs_of {
    ($node:expr, $kind:ident: $($variant:ident),*) => {
        match $node {
            $($kind::$variant(x) => &x.attrs[..],)*
            _ => &[],
        }
    };
}

/// `visit_…` methods that leave out a node `#[cfg(test)]` marks and walk the others.
macro_rules! leave_out_tests {
    ($($method:ident($ty:ty) => |$n:ident| $attrs:expr;)*) => {
        $(fn $method(&mut self, $n: &'ast $ty) {
            if !self.leaves_out($attrs) {
                visit::$method(self, $n);
            }
        })*
    };
}

impl<'ast> Visit<'ast> for Walker {
    fn visit_item(&mut self, item: &'ast Item) {
        let attrs = attrs_of!(item, Item: Const, Enum, ExternCrate, Fn, ForeignMod, Impl, Macro,
            Mod, Static, Struct, Trait, TraitAlias, Type, Union, Use);
        if !self.leaves_out(attrs) {
            return visit::visit_item(self, item);
        }
        if let Item::Mod(m) = item {
            if m.content.is_none() {
                let file = match path_attribute(&m.attrs) {
                    Some(path) => TestFile::Path(path),
                    None => TestFile::Named(m.ident.to_string()),
                };
                self.source.test_files.push(file);
            }
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if m.content.is_some() {
            self.inline.push(m.ident.to_string());
            visit::visit_item_mod(self, m);
            self.inline.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if let Some(first) = path.segments.first() {
            let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
            self.name(segments, first.ident.span().start().line, None);
        }
        visit::visit_path(self, path);
    }

    /// `pub(super)`, `pub(in crate::a)`: an ancestor the item is seen from, not a use of it.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        visit::visit_macro(self, mac);
        self.macro_paths(mac.tokens.clone());
    }

    leave_out_tests! {
        visit_impl_item(ImplItem) => |n| attrs_of!(n, ImplItem: Const, Fn, Type, Macro);
        visit_trait_item(TraitItem) => |n| attrs_of!(n, TraitItem: Const, Fn, Type, Macro);
        visit_field(syn::Field) => |n| &n.attrs;
        visit_variant(syn::Variant) => |n| &n.attrs;
        visit_field_value(syn::FieldValue) => |n| &n.attrs;
        visit_arm(syn::Arm) => |n| &n.attrs;
        visit_local(syn::Local) => |n| &n.attrs;
        visit_stmt_macro(syn::StmtMacro) => |n| &n.attrs;
        visit_expr(Expr) => |n| attrs_of!(n, Expr: Array, Assign, Async, Await, Binary, Block,
            Break, Call, Cast, Closure, Const, Continue, Field, ForLoop, Group, If, Index, Infer,
            Let, Lit, Loop, Macro, Match, MethodCall, Paren, Path, Range, RawAddr, Reference,
            Repeat, Return, Struct, Try, TryBlock, Tuple, Unary, Unsafe, While, Yield);
    }
}

//! A crate's file-level import graph: which file's code names an item of which other file.
//!
//! Every path of a module (its `use` declarations and the paths in its code) is resolved as the
//! compiler would within the crate: `crate::`, `super::` and `self::` paths, a child module's
//! name, a `use` binding (re-exports followed to the file that defines the item) and `*`
//! imports. A path that leaves the crate (`std::..`, another crate) is no edge; a path that
//! stops at a module (`use crate::report;`) is none by itself, only the items named through it
//! are. A `mod` declaration is no edge either: declaring a child is not using it.
//!
//! This file owns the resolution; the rules on the graph are in `cycles.rs`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::modules::Tree;

/// How deep a chain of `use` bindings and `*` imports is followed before giving up.
const MAX_DEPTH: u32 = 24;

/// Where a path leads inside the crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// A module (the path names it, not something in it).
    Module(usize),
    /// An item defined in this module.
    Item(usize),
    /// A name in this module the reader does not see defined (made by a macro): the module's file.
    Unknown(usize),
}

/// Edges `(from, to) -> one path that makes it`, between distinct files.
pub type Edges = BTreeMap<(PathBuf, PathBuf), String>;

/// The file-level import graph of one crate.
pub fn file_edges(tree: &Tree) -> Edges {
    let r = Resolver { tree };
    let mut edges = Edges::new();
    for (m, module) in tree.modules.iter().enumerate() {
        let named = module
            .uses
            .iter()
            .filter(|u| u.name.is_some())
            .map(|u| &u.path)
            .chain(&module.refs);
        for path in named {
            let to = match r.resolve(m, path, 0) {
                Some(Target::Item(t) | Target::Unknown(t)) => t,
                Some(Target::Module(_)) | None => continue,
            };
            let (from, to) = (&module.file, &tree.modules[to].file);
            if from != to {
                edges
                    .entry((from.clone(), to.clone()))
                    .or_insert_with(|| path.join("::"));
            }
        }
    }
    edges
}

struct Resolver<'t> {
    tree: &'t Tree,
}

impl Resolver<'_> {
    /// Where `path`, written in module `from`, leads.
    fn resolve(&self, from: usize, path: &[String], depth: u32) -> Option<Target> {
        if depth > MAX_DEPTH {
            return None;
        }
        let (first, rest) = path.split_first()?;
        let mut at = match first.as_str() {
            "crate" => Target::Module(0),
            "self" => Target::Module(from),
            "super" => Target::Module(self.tree.modules[from].parent?),
            name => self.lookup(from, name, depth)?,
        };
        for segment in rest {
            let Target::Module(m) = at else {
                // An item's own names (variants, associated items): the item's file.
                break;
            };
            at = match segment.as_str() {
                "self" => at,
                "super" => Target::Module(self.tree.modules[m].parent?),
                name => self.lookup(m, name, depth).unwrap_or(Target::Unknown(m)),
            };
        }
        Some(at)
    }

    /// What `name` means in module `m`: a child module, an item of its own, a `use` binding, or a
    /// name a `*` import brings.
    fn lookup(&self, m: usize, name: &str, depth: u32) -> Option<Target> {
        let module = &self.tree.modules[m];
        if let Some(&child) = module.children.get(name) {
            return Some(Target::Module(child));
        }
        if module.items.contains(name) {
            return Some(Target::Item(m));
        }
        if let Some(u) = module.uses.iter().find(|u| u.name.as_deref() == Some(name)) {
            return self.resolve(m, &u.path, depth + 1);
        }
        module
            .uses
            .iter()
            .filter(|u| u.name.is_none())
            .filter_map(|u| match self.resolve(m, &u.path, depth + 1) {
                Some(Target::Module(g)) if g != m => Some(g),
                _ => None,
            })
            .find_map(|g| self.lookup(g, name, depth + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crate's files: `(path, text)`, the root first (and edges: `(from, to)`).
    type Sources = &'static [(&'static str, &'static str)];

    fn edges(sources: &[(&str, &str)]) -> Vec<(String, String)> {
        let tree = Tree::from_sources(sources).unwrap();
        file_edges(&tree)
            .into_keys()
            .map(|(a, b)| (a.display().to_string(), b.display().to_string()))
            .collect()
    }

    fn e(a: &str, b: &str) -> (String, String) {
        (a.to_owned(), b.to_owned())
    }

    #[test]
    fn paths_resolve_to_the_file_that_defines_the_item() {
        #[rustfmt::skip]
        let rows: &[(&str, Sources, Sources)] = &[
            ("a crate:: use",
             &[("lib.rs", "mod a; mod b;"), ("a.rs", "use crate::b::B;"), ("b.rs", "pub struct B;")],
             &[("a.rs", "b.rs")]),
            ("a super:: path in code",
             &[("lib.rs", "mod a; mod b;"), ("a.rs", "fn f() { super::b::g() }"), ("b.rs", "pub fn g() {}")],
             &[("a.rs", "b.rs")]),
            ("a re-export is followed to the defining file, past the mod.rs",
             &[("lib.rs", "mod m; mod x;"), ("m/mod.rs", "mod inner; pub use inner::T;"),
               ("m/inner.rs", "pub struct T;"), ("x.rs", "use crate::m::T;")],
             &[("m/mod.rs", "m/inner.rs"), ("x.rs", "m/inner.rs")]),
            ("a module alias, then an item through it",
             &[("lib.rs", "mod a; mod b;"), ("a.rs", "use crate::b; fn f() -> b::B { todo!() }"),
               ("b.rs", "pub struct B;")],
             &[("a.rs", "b.rs")]),
            ("a glob import of a sibling",
             &[("lib.rs", "mod a; mod b;"), ("a.rs", "use crate::b::*; fn f(_: B) {}"), ("b.rs", "pub struct B;")],
             &[("a.rs", "b.rs")]),
            ("a test module's `super::*` is its own file",
             &[("lib.rs", "mod a;"), ("a.rs", "pub struct A; mod tests { use super::*; fn t(_: A) {} }")],
             &[]),
            ("another crate and std are no edge",
             &[("lib.rs", "mod a;"), ("a.rs", "use std::fmt; use serde::Serialize; fn f(_: fmt::Error) {}")],
             &[]),
            ("a path inside a macro call",
             &[("lib.rs", "mod a; mod b;"), ("a.rs", "fn f() { println!(\"{}\", crate::b::N) }"),
               ("b.rs", "pub const N: u8 = 1;")],
             &[("a.rs", "b.rs")]),
            ("a mod inside cfg_if!",
             &[("lib.rs", "cfg_if::cfg_if! { if #[cfg(x)] { mod a; } else { mod b; } }"),
               ("a.rs", "use crate::b::B;"), ("b.rs", "pub struct B;")],
             &[("a.rs", "b.rs")]),
            ("an enum variant is its enum's file",
             &[("lib.rs", "mod a; mod b;"), ("a.rs", "use crate::b::E; fn f() -> E { E::X }"),
               ("b.rs", "pub enum E { X }")],
             &[("a.rs", "b.rs")]),
            ("declaring a child is no edge",
             &[("lib.rs", "mod a;"), ("a.rs", "pub struct A;")],
             &[]),
        ];
        for (what, sources, want) in rows {
            let want: Vec<_> = want.iter().map(|(a, b)| e(a, b)).collect();
            assert_eq!(edges(sources), want, "{what}");
        }
    }
}

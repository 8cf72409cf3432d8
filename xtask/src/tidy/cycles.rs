//! The circles of an import graph: between files (a strongly connected set of files, each
//! reaching every other through imports), and between the folders (modules) of one parent (the
//! same, with every file counted as the child module of that parent it lies under).
//!
//! This file owns finding them (Tarjan's algorithm, from `petgraph`) and saying where they are;
//! which circles are allowed is the caller's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;

use super::imports::Edges;
use super::modules::Tree;

/// One circle: its members, and the imports between them (`from -> to (path)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circle {
    /// Where: empty for files; the parent module (`crate`, `crate::dispatch`) for folders.
    pub within: String,
    /// The members (files, or child modules of `within`), sorted.
    pub members: BTreeSet<String>,
    /// Each import between two members, as `from -> to (path as written)`.
    pub imports: Vec<String>,
}

/// The strongly connected sets of two or more nodes of `edges`, each with its inner edges.
fn circles_of(within: &str, edges: &BTreeMap<(String, String), String>) -> Vec<Circle> {
    let mut graph = DiGraph::<&str, ()>::new();
    let mut nodes = BTreeMap::new();
    for (a, b) in edges.keys() {
        for n in [a, b] {
            nodes
                .entry(n.as_str())
                .or_insert_with(|| graph.add_node(n.as_str()));
        }
        graph.add_edge(nodes[a.as_str()], nodes[b.as_str()], ());
    }
    let mut circles: Vec<Circle> = tarjan_scc(&graph)
        .into_iter()
        .filter(|scc| scc.len() > 1)
        .map(|scc| {
            let members: BTreeSet<String> = scc.iter().map(|&n| graph[n].to_owned()).collect();
            let imports = edges
                .iter()
                .filter(|((a, b), _)| members.contains(a) && members.contains(b))
                .map(|((a, b), path)| format!("{a} -> {b} ({path})"))
                .collect();
            Circle {
                within: within.to_owned(),
                members,
                imports,
            }
        })
        .collect();
    circles.sort_by(|a, b| a.members.cmp(&b.members));
    circles
}

fn shown(p: &Path) -> String {
    p.display().to_string()
}

/// Circles between the files of one crate.
pub fn file_circles(edges: &Edges) -> Vec<Circle> {
    let named = edges
        .iter()
        .map(|((a, b), path)| ((shown(a), shown(b)), path.clone()))
        .collect();
    circles_of("", &named)
}

/// Circles between the child modules of any one module of `tree` where at least one member is a
/// folder (a module with files of its own below it): a circle of plain files is a file circle
/// already. Each member is named by its module's file (`dispatch/mod.rs`, `cli.rs`).
pub fn folder_circles(tree: &Tree, edges: &Edges) -> Vec<Circle> {
    let module_at = |path: &[String]| tree.modules.iter().find(|m| m.path == path);
    // Each file's own module path (the module whose file it is, not an inline one in it).
    let mut module_of: BTreeMap<&PathBuf, &[String]> = BTreeMap::new();
    for m in &tree.modules {
        let outer = module_of.get(&m.file).is_some_and(|p| p.len() <= m.path.len());
        if !outer {
            module_of.insert(&m.file, &m.path);
        }
    }
    let mut by_parent: BTreeMap<&[String], BTreeMap<(String, String), String>> = BTreeMap::new();
    for ((a, b), path) in edges {
        let (Some(&pa), Some(&pb)) = (module_of.get(a), module_of.get(b)) else {
            continue;
        };
        let common = pa.iter().zip(pb).take_while(|(x, y)| x == y).count();
        if common == pa.len() || common == pb.len() {
            // A module and its own descendant: not two siblings.
            continue;
        }
        let sibling = |p: &[String]| module_at(&p[..=common]).map_or_else(String::new, |m| shown(&m.file));
        by_parent
            .entry(&pa[..common])
            .or_default()
            .entry((sibling(pa), sibling(pb)))
            .or_insert_with(|| format!("{} -> {}: {path}", shown(a), shown(b)));
    }
    // A folder: a module some file module lies below.
    let is_folder = |file: &str| {
        let Some(m) = tree.modules.iter().find(|m| shown(&m.file) == file) else {
            return false;
        };
        tree.modules
            .iter()
            .any(|d| d.path.len() > m.path.len() && d.path.starts_with(&m.path) && d.file != m.file)
    };
    let mut circles = Vec::new();
    for (parent, edges) in by_parent {
        let within = std::iter::once("crate")
            .chain(parent.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("::");
        circles.extend(
            circles_of(&within, &edges)
                .into_iter()
                .filter(|c| c.members.iter().any(|m| is_folder(m))),
        );
    }
    circles
}

#[cfg(test)]
mod tests {
    use super::super::imports::file_edges;
    use super::*;

    /// A crate's files: `(path, text)`, the root first.
    type Sources = &'static [(&'static str, &'static str)];
    /// A circle's members.
    type Members = &'static [&'static str];
    /// Folder circles: `(parent module, members)`.
    type Within = &'static [(&'static str, Members)];

    fn members(c: &Circle) -> Vec<&str> {
        c.members.iter().map(String::as_str).collect()
    }

    #[test]
    fn a_circle_between_files_is_found_and_named() {
        #[rustfmt::skip]
        let rows: &[(&str, Sources, &[&[&str]])] = &[
            ("two files importing each other",
             &[("lib.rs", "mod a; mod b;"), ("a.rs", "use crate::b::B; pub struct A;"),
               ("b.rs", "use crate::a::A; pub struct B;")],
             &[&["a.rs", "b.rs"]]),
            ("three files in a ring, through super:: and a re-export",
             &[("lib.rs", "mod a; mod b; mod m;"), ("a.rs", "use crate::b::B; pub struct A;"),
               ("b.rs", "pub struct B; fn f() -> crate::m::C { todo!() }"),
               ("m/mod.rs", "mod c; pub use c::C;"), ("m/c.rs", "pub struct C; fn g(_: crate::a::A) {}")],
             &[&["a.rs", "b.rs", "m/c.rs"]]),
            ("a chain is no circle",
             &[("lib.rs", "mod a; mod b; mod c;"), ("a.rs", "use crate::b::B;"),
               ("b.rs", "pub struct B; use crate::c::C;"), ("c.rs", "pub struct C;")],
             &[]),
            ("a mod.rs that re-exports, and a child that imports a sibling through it",
             &[("lib.rs", "mod m;"), ("m/mod.rs", "mod a; mod b; pub use a::A; pub use b::B;"),
               ("m/a.rs", "pub struct A; use super::B;"), ("m/b.rs", "pub struct B;")],
             &[]),
            ("a test module using what imports its file: test code is no layer",
             &[("lib.rs", "mod a; mod b;"), ("a.rs", "pub struct A; #[cfg(test)] mod tests { use crate::b::B; }"),
               ("b.rs", "pub struct B; use crate::a::A;")],
             &[]),
            ("a test file under cfg(all(test, feature))",
             &[("lib.rs", "mod a; mod b;"), ("a/mod.rs", "pub struct A; #[cfg(all(test, feature = \"x\"))] mod tests;"),
               ("a/tests.rs", "use crate::b::B;"), ("b.rs", "pub struct B; use crate::a::A;")],
             &[]),
            ("the same without cfg(test)",
             &[("lib.rs", "mod a; mod b;"), ("a.rs", "pub struct A; mod tests { use crate::b::B; }"),
               ("b.rs", "pub struct B; use crate::a::A;")],
             &[&["a.rs", "b.rs"]]),
        ];
        for (what, sources, want) in rows {
            let tree = Tree::from_sources(sources).unwrap();
            let found = file_circles(&file_edges(&tree));
            let got: Vec<Vec<&str>> = found.iter().map(members).collect();
            let want: Vec<Vec<&str>> = want.iter().map(|w| w.to_vec()).collect();
            assert_eq!(got, want, "{what}");
            for c in &found {
                assert_eq!(
                    c.imports.len(),
                    c.members.len(),
                    "{what}: each import of the ring is named: {c:?}"
                );
            }
        }
    }

    #[test]
    fn a_circle_between_folders_is_found_and_a_file_circle_is_not_counted_twice() {
        #[rustfmt::skip]
        let rows: &[(&str, Sources, Within)] = &[
            ("two folders, one file each way (no file circle)",
             &[("lib.rs", "mod x; mod y;"),
               ("x/mod.rs", "mod one; mod two;"), ("x/one.rs", "pub struct One; use crate::y::a::A;"),
               ("x/two.rs", "pub struct Two;"),
               ("y/mod.rs", "pub mod a; mod b;"), ("y/a.rs", "pub struct A;"),
               ("y/b.rs", "fn f(_: crate::x::two::Two) {}")],
             &[("crate", &["x/mod.rs", "y/mod.rs"])]),
            ("a folder and a file",
             &[("lib.rs", "mod x; mod f;"), ("x/mod.rs", "pub mod one; mod two;"),
               ("x/one.rs", "pub struct One;"), ("x/two.rs", "use crate::f::F;"),
               ("f.rs", "pub struct F; fn g(_: crate::x::one::One) {}")],
             &[("crate", &["f.rs", "x/mod.rs"])]),
            ("two plain files: the file rule's, not this one's",
             &[("lib.rs", "mod a; mod b;"), ("a.rs", "use crate::b::B; pub struct A;"),
               ("b.rs", "use crate::a::A; pub struct B;")],
             &[]),
            ("a folder using its parent's file is no sibling circle",
             &[("lib.rs", "mod x; pub struct R;"), ("x/mod.rs", "mod one; pub use one::One;"),
               ("x/one.rs", "pub struct One; fn f(_: crate::R) {}")],
             &[]),
        ];
        for (what, sources, want) in rows {
            let tree = Tree::from_sources(sources).unwrap();
            let found = folder_circles(&tree, &file_edges(&tree));
            let got: Vec<(&str, Vec<&str>)> = found.iter().map(|c| (c.within.as_str(), members(c))).collect();
            let want: Vec<(&str, Vec<&str>)> = want.iter().map(|(w, m)| (*w, m.to_vec())).collect();
            assert_eq!(got, want, "{what}");
        }
    }
}

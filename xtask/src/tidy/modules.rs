//! A crate's module tree as the import rule sees it: every module (a file, or a `mod name { .. }`
//! inside one), the names it defines, the `use` declarations it makes and the paths its code
//! names, read with `syn` from the crate's root file down its `mod` declarations.
//!
//! This file owns reading and parsing. It resolves no path (`imports.rs` does) and judges nothing.
//! `mod` declarations inside `cfg_if!` count, as the compiler would see them with either branch;
//! paths inside other macro calls count where the arguments parse as expressions. Test code
//! (an item or module under `#[cfg(test)]`) is left out: it sits above every layer (a test may
//! use any module to check its own) and nothing imports it, so it makes no layer circular.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// One `use` binding: `use a::b::c as d` binds `d` to `a::b::c`; a glob binds no name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Use {
    /// The name bound (`None` for a `*` import).
    pub name: Option<String>,
    /// The path it names, as written.
    pub path: Vec<String>,
}

/// One module of a crate.
#[derive(Debug, Default)]
pub struct Module {
    /// Its path from the crate root (empty for the root).
    pub path: Vec<String>,
    /// The file its code is in, relative to the workspace root.
    pub file: PathBuf,
    /// The module it is declared in (`None` for the root).
    pub parent: Option<usize>,
    /// Its child modules by name.
    pub children: BTreeMap<String, usize>,
    /// The names it defines (types, functions, constants, statics, traits, macros), modules aside.
    pub items: HashSet<String>,
    /// Its `use` bindings (those of function bodies in it too).
    pub uses: Vec<Use>,
    /// Every path its code names, as written.
    pub refs: Vec<Vec<String>>,
}

/// A crate's modules; the root is module 0.
#[derive(Debug, Default)]
pub struct Tree {
    /// The modules, the root first.
    pub modules: Vec<Module>,
}

/// A file that could not be read or parsed, or a `mod` whose file is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// The file, relative to the workspace root.
    pub file: PathBuf,
    /// What went wrong.
    pub what: String,
}

impl Tree {
    /// Reads the crate whose root file is `root_file` (relative to `workspace`), following its
    /// `mod` declarations into their files.
    pub fn load(workspace: &Path, root_file: &Path) -> Result<Self, LoadError> {
        let mut tree = Tree::default();
        tree.modules.push(Module {
            file: root_file.to_owned(),
            ..Module::default()
        });
        let dir = root_file.parent().unwrap_or(Path::new("")).to_owned();
        let items = parse(workspace, root_file)?.items;
        tree.walk(workspace, 0, &dir, &items)?;
        Ok(tree)
    }

    /// A tree from sources given in memory (`(file, text)`, the root first), for tests.
    pub fn from_sources(sources: &[(&str, &str)]) -> Result<Self, LoadError> {
        let dir = tempfile::tempdir().map_err(|e| LoadError {
            file: PathBuf::new(),
            what: e.to_string(),
        })?;
        for (file, text) in sources {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().expect("a file has a folder")).expect("temp dir");
            std::fs::write(path, text).expect("temp dir");
        }
        Self::load(dir.path(), Path::new(sources[0].0))
    }

    fn add_child(&mut self, parent: usize, name: &str, file: PathBuf) -> usize {
        let id = self.modules.len();
        let mut path = self.modules[parent].path.clone();
        path.push(name.to_owned());
        self.modules.push(Module {
            path,
            file,
            parent: Some(parent),
            ..Module::default()
        });
        self.modules[parent].children.insert(name.to_owned(), id);
        id
    }

    /// Records `items` as the contents of module `m`, whose child modules' files are under `dir`.
    fn walk(&mut self, workspace: &Path, m: usize, dir: &Path, items: &[syn::Item]) -> Result<(), LoadError> {
        for item in items.iter().filter(|i| !is_test_only(i)) {
            match item {
                syn::Item::Mod(module) => {
                    let name = module.ident.to_string();
                    let child_dir = dir.join(&name);
                    match &module.content {
                        Some((_, inner)) => {
                            let file = self.modules[m].file.clone();
                            let child = self.add_child(m, &name, file);
                            self.walk(workspace, child, &child_dir, inner)?;
                        }
                        None => {
                            let file = child_file(workspace, dir, &name).ok_or_else(|| LoadError {
                                file: self.modules[m].file.clone(),
                                what: format!("`mod {name};` has no file {name}.rs or {name}/mod.rs"),
                            })?;
                            let grandchildren = if file.ends_with("mod.rs") {
                                file.parent().unwrap_or(Path::new("")).to_owned()
                            } else {
                                child_dir
                            };
                            let inner = parse(workspace, &file)?.items;
                            let child = self.add_child(m, &name, file);
                            self.walk(workspace, child, &grandchildren, &inner)?;
                        }
                    }
                }
                syn::Item::Macro(mac) if is_cfg_if(&mac.mac.path) => {
                    for group in brace_groups(mac.mac.tokens.clone()) {
                        if let Ok(file) = syn::parse2::<syn::File>(group) {
                            self.walk(workspace, m, dir, &file.items)?;
                        }
                    }
                }
                other => {
                    if let Some(name) = item_name(other) {
                        self.modules[m].items.insert(name);
                    }
                    let mut refs = Refs::default();
                    refs.visit_item(other);
                    let module = &mut self.modules[m];
                    module.uses.extend(refs.uses);
                    module.refs.extend(refs.paths);
                }
            }
        }
        Ok(())
    }
}

fn parse(workspace: &Path, file: &Path) -> Result<syn::File, LoadError> {
    let text = std::fs::read_to_string(workspace.join(file)).map_err(|e| LoadError {
        file: file.to_owned(),
        what: format!("cannot be read: {e}"),
    })?;
    syn::parse_file(&text).map_err(|e| LoadError {
        file: file.to_owned(),
        what: format!("does not parse: {e}"),
    })
}

/// `dir/name.rs` or `dir/name/mod.rs`, relative to the workspace, whichever exists.
fn child_file(workspace: &Path, dir: &Path, name: &str) -> Option<PathBuf> {
    [dir.join(format!("{name}.rs")), dir.join(name).join("mod.rs")]
        .into_iter()
        .find(|f| workspace.join(f).is_file())
}

/// An item under `#[cfg(test)]`.
fn is_test_only(item: &syn::Item) -> bool {
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
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => return false,
    };
    attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .filter_map(|a| a.parse_args::<syn::Meta>().ok())
        .any(|cfg| needs_test(&cfg))
}

/// `test`, or `all(.., test, ..)`.
fn needs_test(cfg: &syn::Meta) -> bool {
    use syn::parse::Parser;
    match cfg {
        syn::Meta::Path(p) => p.is_ident("test"),
        syn::Meta::List(list) if list.path.is_ident("all") => {
            syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated
                .parse2(list.tokens.clone())
                .is_ok_and(|all| all.iter().any(needs_test))
        }
        _ => false,
    }
}

fn is_cfg_if(path: &syn::Path) -> bool {
    path.segments.last().is_some_and(|s| s.ident == "cfg_if")
}

/// Every `{ .. }` group of a `cfg_if!` body (its branches).
fn brace_groups(tokens: proc_macro2::TokenStream) -> Vec<proc_macro2::TokenStream> {
    tokens
        .into_iter()
        .filter_map(|t| match t {
            proc_macro2::TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Brace => {
                Some(g.stream())
            }
            _ => None,
        })
        .collect()
}

/// The name an item defines in its module's namespace.
fn item_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::ExternCrate(i) => i.rename.as_ref().map_or(&i.ident, |(_, r)| r),
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Macro(i) => i.ident.as_ref()?,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::TraitAlias(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// The `use` bindings and paths of one item, function bodies included.
#[derive(Default)]
struct Refs {
    uses: Vec<Use>,
    paths: Vec<Vec<String>>,
}

impl Refs {
    fn flatten(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.flatten(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.bind(prefix, &n.ident, &n.ident),
            syn::UseTree::Rename(r) => self.bind(prefix, &r.ident, &r.rename),
            syn::UseTree::Glob(_) => self.uses.push(Use {
                name: None,
                path: prefix.clone(),
            }),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.flatten(prefix, t);
                }
            }
        }
    }

    /// `use prefix::ident as name` (`use prefix::{self}` names the prefix itself).
    fn bind(&mut self, prefix: &[String], ident: &syn::Ident, name: &syn::Ident) {
        let mut path = prefix.to_vec();
        if ident != "self" {
            path.push(ident.to_string());
        }
        let name = if name == "self" {
            prefix.last().cloned()
        } else {
            Some(name.to_string())
        };
        if name.as_deref() == Some("_") {
            // `use Trait as _`: no name bound, but still a dependency.
            self.paths.push(path);
            return;
        }
        self.uses.push(Use { name, path });
    }
}

impl<'ast> Visit<'ast> for Refs {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.flatten(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            self.paths
                .push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        syn::visit::visit_macro(self, mac);
        use syn::parse::Parser;
        let args = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        if let Ok(exprs) = args.parse2(mac.tokens.clone()) {
            for e in &exprs {
                self.visit_expr(e);
            }
        }
    }
}

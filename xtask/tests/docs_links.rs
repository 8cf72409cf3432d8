//! Every relative link of README.md and docs/ resolves inside the repository: the file (or
//! directory) exists, the path never leaves the checkout, and an anchor (`file.md#heading`, or
//! `#heading` within a page) names a heading of the target page, spelled as GitHub makes heading
//! anchors. Links to web pages (`http`, `https`, `mailto`) are not followed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .canonicalize()
        .unwrap()
}

/// README.md and every Markdown file under docs/.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The links of a page (destinations as written) and its heading anchors.
fn read(text: &str) -> (Vec<String>, HashSet<String>) {
    let mut links = Vec::new();
    let mut anchors = HashSet::new();
    let mut heading: Option<String> = None;
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for event in Parser::new_ext(text, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                links.push(dest_url.to_string());
            }
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let slug = slug(&heading.take().unwrap_or_default());
                let n = seen.entry(slug.clone()).or_insert(0);
                anchors.insert(if *n == 0 {
                    slug.clone()
                } else {
                    format!("{slug}-{n}")
                });
                *n += 1;
            }
            _ => {}
        }
    }
    (links, anchors)
}

/// GitHub's anchor of a heading: lower case, punctuation other than `-` and `_` dropped, each
/// space a `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn is_web(dest: &str) -> bool {
    ["http://", "https://", "mailto:"]
        .iter()
        .any(|p| dest.starts_with(p))
}

/// Every broken link of `page`, one line each.
fn broken(root: &Path, page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).unwrap();
    let (links, own) = read(&text);
    let rel = page.strip_prefix(root).unwrap().display().to_string();
    let mut bad = Vec::new();
    for dest in links {
        if is_web(&dest) {
            continue;
        }
        let (path, anchor) = match dest.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (dest.as_str(), None),
        };
        if path.starts_with('/') || path.contains("://") {
            bad.push(format!("{rel}: {dest}: not a relative link"));
            continue;
        }
        let target = if path.is_empty() {
            page.to_path_buf()
        } else {
            match page.parent().unwrap().join(path).canonicalize() {
                Ok(t) => t,
                Err(_) => {
                    bad.push(format!("{rel}: {dest}: no such file"));
                    continue;
                }
            }
        };
        if !target.starts_with(root) {
            bad.push(format!("{rel}: {dest}: outside the repository"));
            continue;
        }
        let Some(anchor) = anchor else { continue };
        if target.extension() != Some(std::ffi::OsStr::new("md")) {
            continue;
        }
        let anchors = if target == page {
            own.clone()
        } else {
            read(&std::fs::read_to_string(&target).unwrap()).1
        };
        if !anchors.contains(anchor) {
            bad.push(format!("{rel}: {dest}: no heading with that anchor"));
        }
    }
    bad
}

#[test]
fn every_relative_link_resolves_inside_the_repository() {
    let root = root();
    let pages = pages(&root);
    assert!(pages.len() > 10, "README.md and docs/: {pages:?}");
    let bad: Vec<String> = pages.iter().flat_map(|p| broken(&root, p)).collect();
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

/// The checker itself: a missing file, a path out of the checkout, an absolute path and a
/// missing anchor are each found; a good link and a web link are not.
#[test]
fn the_checker_finds_each_kind_of_broken_link() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/b.md"), "# B page\n\n## Two words: `code`\n").unwrap();
    let page = root.join("docs/a.md");
    std::fs::write(
        &page,
        "# A\n\n[ok](b.md#two-words-code) [self](#a) [web](https://example.com/x)\n\
         [gone](c.md) [out](../../x.md) [abs](/etc/passwd) [anchor](b.md#three) [selfbad](#b)\n",
    )
    .unwrap();
    let bad = broken(&root, &page);
    let got: Vec<&str> = bad.iter().map(|l| l.split(": ").nth(1).unwrap()).collect();
    assert_eq!(
        got,
        ["c.md", "../../x.md", "/etc/passwd", "b.md#three", "#b"],
        "{bad:#?}"
    );
    assert_eq!(
        slug("Busy cards: `--wait-for-cards SECS`"),
        "busy-cards---wait-for-cards-secs"
    );
}

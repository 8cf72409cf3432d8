//! Selectors on pytest node ids: a `--case` or `--exclude` value that names a test file, a class
//! or an item the pytest way (`tests/test_add.py`, `tests/test_add.py::TestAdd`,
//! `tests/test_add.py::TestAdd::test_small[2]`) becomes the cardguard ids of the collected items
//! it names (one flag each); any other value (`Class`, `Class::case`, `tag:NAME`) is left to the
//! runner.

use std::ffi::OsString;

use super::collect::Item;

/// The flags that take a selector.
const SELECTOR_FLAGS: [&str; 2] = ["--case", "--exclude"];

/// `flags` with every node-id selector replaced by the ids of the items it names.
pub fn translate(flags: Vec<OsString>, items: &[Item]) -> Vec<OsString> {
    let mut out = Vec::with_capacity(flags.len());
    let mut it = flags.into_iter();
    while let Some(f) = it.next() {
        let text = f.to_string_lossy().into_owned();
        if let Some(flag) = SELECTOR_FLAGS.iter().find(|s| **s == text) {
            match it.next() {
                Some(v) => push(&mut out, flag, &v.to_string_lossy(), items),
                None => out.push(f),
            }
            continue;
        }
        match SELECTOR_FLAGS
            .iter()
            .find_map(|s| text.strip_prefix(&format!("{s}=")).map(|v| (*s, v)))
        {
            Some((flag, v)) => push(&mut out, flag, v, items),
            None => out.push(f),
        }
    }
    out
}

fn push(out: &mut Vec<OsString>, flag: &str, value: &str, items: &[Item]) {
    let named: Vec<String> = if is_node_id(value) {
        let v = value.trim_end_matches("::");
        items
            .iter()
            .filter(|i| i.nodeid == v || i.nodeid.starts_with(&format!("{v}::")))
            .map(|i| format!("{}::{}", i.class, i.case))
            .collect()
    } else {
        Vec::new()
    };
    if named.is_empty() {
        out.push(flag.into());
        out.push(value.into());
        return;
    }
    for id in named {
        out.push(flag.into());
        out.push(id.into());
    }
}

/// Whether `value` is a pytest node id (a path to a `.py` file, perhaps with `::` parts).
fn is_node_id(value: &str) -> bool {
    value.split("::").next().is_some_and(|p| p.ends_with(".py"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(nodeid: &str, class: &str, case: &str) -> Item {
        serde_json::from_value(serde_json::json!({
            "nodeid": nodeid, "class": class, "case": case, "module": "m", "runtime": "r",
            "devices": 1, "timeout": null, "retries": null, "tags": [], "skip": null, "xfail": null,
        }))
        .unwrap()
    }

    #[test]
    fn node_ids_become_the_ids_of_the_items_they_name() {
        let items = [
            item("t/test_a.py::TestA::test_x", "t.test_a.TestA", "test_x"),
            item("t/test_a.py::TestA::test_y[1 2]", "t.test_a.TestA", "test_y[1_2]"),
            item("t/test_a.py::test_z", "t.test_a", "test_z"),
        ];
        let v = |s: &[&str]| s.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            translate(v(&["--case", "t/test_a.py::TestA", "--retries", "1"]), &items),
            v(&[
                "--case",
                "t.test_a.TestA::test_x",
                "--case",
                "t.test_a.TestA::test_y[1_2]",
                "--retries",
                "1"
            ])
        );
        assert_eq!(
            translate(v(&["--exclude=t/test_a.py::TestA::test_y[1 2]"]), &items),
            v(&["--exclude", "t.test_a.TestA::test_y[1_2]"])
        );
        assert_eq!(translate(v(&["--case", "t/test_a.py"]), &items).len(), 6);
        // Cardguard's own selectors, and a node id naming nothing, go to the runner as they are.
        let own = v(&[
            "--case",
            "t.test_a.TestA",
            "--exclude",
            "tag:sdma",
            "--case",
            "t/none.py",
        ]);
        assert_eq!(translate(own.clone(), &items), own);
    }
}

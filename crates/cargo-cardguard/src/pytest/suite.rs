//! The collected items as a runner [`Suite`]: one pooled class per cardguard class (a pytest
//! class, or a module's plain functions), its runtime the items', each item a case with its
//! marker's cards, timeout, retries and tags; a skipped item is skipped by the dispatcher with its
//! reason (never assigned, never in a sink). The cases' bodies run in the pytest lanes, never in
//! this process.

use std::collections::BTreeMap;
use std::time::Duration;

use runner::case::{CaseFailure, CaseSpec, ClassSpec, Runtime, Suite};

use super::collect::Item;

/// Items that cannot make a suite.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// One class with items of two runtimes.
    #[error("class {class}: items of two runtimes ({a} and {b}); a class runs on one pooled worker")]
    TwoRuntimes {
        /// The class.
        class: String,
        /// One runtime.
        a: String,
        /// The other.
        b: String,
    },
    /// A timeout that is not a positive number of seconds.
    #[error("{nodeid}: cardguard(timeout={value}) is not a positive number of seconds")]
    BadTimeout {
        /// The item.
        nodeid: String,
        /// The value.
        value: f64,
    },
}

/// The suite of `items`, classes in collection order.
pub fn suite(items: &[Item]) -> Result<Suite, SuiteError> {
    let mut order: Vec<String> = Vec::new();
    let mut classes: BTreeMap<String, ClassSpec> = BTreeMap::new();
    for item in items {
        let class = match classes.get_mut(&item.class) {
            Some(c) => {
                if c.runtime.name != item.runtime {
                    return Err(SuiteError::TwoRuntimes {
                        class: item.class.clone(),
                        a: c.runtime.name.clone(),
                        b: item.runtime.clone(),
                    });
                }
                c
            }
            None => {
                order.push(item.class.clone());
                classes
                    .entry(item.class.clone())
                    .or_insert_with(|| ClassSpec::pooled(&item.class, Runtime::new(&item.runtime)))
            }
        };
        class.cases.push(case(item)?);
    }
    let mut suite = Suite::new();
    for name in order {
        if let Some(c) = classes.remove(&name) {
            suite = suite.class(c);
        }
    }
    Ok(suite)
}

fn case(item: &Item) -> Result<CaseSpec, SuiteError> {
    let mut c = CaseSpec::host(&item.case, &[], |_| {
        Err(CaseFailure::usage(
            "a pytest item runs in a pytest lane, never in the dispatcher",
        ))
    })
    .devices(item.devices)
    .tags(item.tags.iter().cloned());
    if let Some(t) = item.timeout {
        if !(t.is_finite() && t > 0.0) {
            return Err(SuiteError::BadTimeout {
                nodeid: item.nodeid.clone(),
                value: t,
            });
        }
        c = c.timeout(Duration::from_secs_f64(t));
    }
    if let Some(r) = item.retries {
        c = c.retries(r);
    }
    if let Some(reason) = &item.skip {
        c = c.skip_if(reason.clone(), |_| true);
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pytest::collect::parse;

    const ITEMS: &str = r#"
{"nodeid":"t/test_a.py::TestA::test_x","class":"t.test_a.TestA","case":"test_x","module":"t.test_a","runtime":"rt1","devices":1,"timeout":null,"retries":null,"tags":["sdma"],"skip":null,"xfail":null}
{"nodeid":"t/test_a.py::TestA::test_y[2]","class":"t.test_a.TestA","case":"test_y[2]","module":"t.test_a","runtime":"rt1","devices":2,"timeout":60,"retries":1,"tags":[],"skip":"no card","xfail":null}
{"nodeid":"t/test_a.py::test_z","class":"t.test_a","case":"test_z","module":"t.test_a","runtime":"rt2","devices":1,"timeout":null,"retries":null,"tags":[],"skip":null,"xfail":"known"}
"#;

    #[test]
    fn items_become_classes_with_their_settings() {
        let s = suite(&parse(ITEMS).unwrap()).unwrap();
        s.validate().unwrap();
        assert_eq!(s.classes.len(), 2);
        let a = &s.classes[0];
        assert_eq!(a.name, "t.test_a.TestA");
        assert_eq!(a.runtime.name, "rt1");
        assert_eq!(a.cases[0].settings.tags, ["sdma"]);
        let y = &a.cases[1];
        assert_eq!(y.device_count, 2);
        assert_eq!(y.settings.timeout, Some(Duration::from_secs(60)));
        assert_eq!(y.settings.retries, Some(1));
        assert_eq!(y.settings.skip_if[0].reason, "no card");
        assert_eq!(s.classes[1].runtime.name, "rt2");
        assert!(s.find_case("t.test_a::test_z").is_some());
    }

    #[test]
    fn a_class_of_two_runtimes_is_refused_by_name() {
        let two = ITEMS.replace(r#""runtime":"rt1","devices":2"#, r#""runtime":"rt9","devices":2"#);
        let e = suite(&parse(&two).unwrap()).unwrap_err().to_string();
        assert!(
            e.contains("t.test_a.TestA") && e.contains("rt1") && e.contains("rt9"),
            "{e}"
        );
    }

    #[test]
    fn a_bad_line_is_named_by_number() {
        let e = parse("{\"nodeid\":1}\n").unwrap_err().to_string();
        assert!(e.starts_with("collected item line 1"), "{e}");
    }
}

//! `--list`: the selected cases, in hand-out order, as plain lines for people or as JSON Lines
//! for tools (`--format json`: one object per case per line).
//!
//! A plain line is `Class::case  (runtime, kind)`, followed by `  [no binary: k, ...]` when a
//! kernel of the case has no binary for the run's platform (the case would be skipped). A JSON
//! object has `id`, `class`, `runtime`, `kind`, `body`, `tags` (the case's and its class's),
//! `arch` (the arches its filter admits), `devices`, `timeout_s` and `retries` (what applies to
//! it on this command line: a config override's, else its own setting, else the run-wide value), `expect_failure` (`null`, or its
//! `reason` and `expected`), `skip_if` (the reasons of its skip conditions), `kernels` and
//! `missing_kernels`. This file owns those formats; it never decides what is selected.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use crate::case::{Expected, Suite};
use crate::config::Overrides;
use crate::kernels::MissingKernels;
use crate::output;
use crate::select::Selection;

/// What applies to a case without a setting of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Defaults {
    /// `--case-timeout` (or its default).
    pub case_timeout: Duration,
    /// `--retries`.
    pub retries: u32,
}

/// Prints the plain list.
pub fn plain(suite: &Suite, selection: &Selection, missing: &BTreeMap<String, MissingKernels>) {
    for line in plain_lines(suite, selection, missing) {
        output::out(line);
    }
}

/// Prints the JSON Lines list.
pub fn json(
    suite: &Suite,
    selection: &Selection,
    missing: &BTreeMap<String, MissingKernels>,
    d: Defaults,
    overrides: &Overrides,
) {
    for v in json_values(suite, selection, missing, d, overrides) {
        output::out(v);
    }
}

fn plain_lines(
    suite: &Suite,
    selection: &Selection,
    missing: &BTreeMap<String, MissingKernels>,
) -> Vec<String> {
    let mut lines = Vec::new();
    for sc in &selection.classes {
        let class = &suite.classes[sc.class];
        for &i in &sc.cases {
            let id = class.case_id(&class.cases[i]);
            let mut line = format!("{id}  ({}, {})", class.runtime, class.kind.name());
            if let Some(m) = missing.get(&id) {
                line.push_str(&format!("  [no binary: {}]", m.kernels.join(", ")));
            }
            lines.push(line);
        }
    }
    lines
}

fn expected_text(e: Expected) -> String {
    match e {
        Expected::Class(c) => format!("class:{c}"),
        Expected::Code(c) => format!("code:{c}"),
        Expected::OpTimeout => "op_timeout".to_owned(),
    }
}

fn json_values(
    suite: &Suite,
    selection: &Selection,
    missing: &BTreeMap<String, MissingKernels>,
    d: Defaults,
    overrides: &Overrides,
) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for sc in &selection.classes {
        let class = &suite.classes[sc.class];
        for &i in &sc.cases {
            let case = &class.cases[i];
            let id = class.case_id(case);
            let settings = overrides.settings_of(class, case);
            let expect = settings.expect.as_ref().map(|e| {
                json!({
                    "reason": e.reason,
                    "expected": expected_text(e.expected),
                })
            });
            let missing_kernels: Vec<&str> = missing
                .get(&id)
                .map(|m| m.kernels.iter().map(String::as_str).collect())
                .unwrap_or_default();
            out.push(json!({
                "id": id,
                "class": class.name,
                "runtime": class.runtime.name,
                "kind": class.kind.name(),
                "body": case.body.name(),
                "tags": settings.tags,
                "arch": case.arch.names(),
                "devices": case.device_count,
                "timeout_s": settings.timeout.unwrap_or(d.case_timeout).as_secs_f64(),
                "retries": settings.retries.unwrap_or(d.retries),
                "expect_failure": expect,
                "skip_if": settings.skip_if.iter().map(|s| s.reason.as_str()).collect::<Vec<_>>(),
                "kernels": case.kernels,
                "missing_kernels": missing_kernels,
            }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use platform_common::{Arch, FailureClass};

    use super::*;
    use crate::case::{CaseSpec, ClassSpec, Runtime};
    use crate::select::{select, Filter};

    fn suite() -> Suite {
        Suite::new().class(
            ClassSpec::pooled("K", Runtime::new("rt")).tags(["sdma"]).cases([
                CaseSpec::trivial("plain"),
                CaseSpec::compute("own", &["vector_add", "gone"], |_, _| Vec::new())
                    .timeout(Duration::from_millis(1500))
                    .retries(0)
                    .tags(["slow"])
                    .expect_failure("known", Expected::Class(FailureClass::Result))
                    .skip_if("never", |_| false)
                    .only_on(&[Arch::A5]),
            ]),
        )
    }

    #[test]
    fn plain_lines_stay_as_they_were_and_name_missing_binaries() {
        let s = suite();
        let sel = select(&s, Arch::A5, &Filter::default()).unwrap();
        let missing = BTreeMap::from([(
            "K::own".to_owned(),
            MissingKernels {
                kernels: vec!["gone".into()],
                reason: "x".into(),
            },
        )]);
        assert_eq!(
            plain_lines(&s, &sel, &missing),
            [
                "K::plain  (rt, pooled)",
                "K::own  (rt, pooled)  [no binary: gone]"
            ]
        );
    }

    #[test]
    fn json_objects_carry_every_field_with_what_applies() {
        let s = suite();
        let sel = select(&s, Arch::A5, &Filter::default()).unwrap();
        let d = Defaults {
            case_timeout: Duration::from_secs(300),
            retries: 2,
        };
        let v = json_values(&s, &sel, &BTreeMap::new(), d, &Overrides::default());
        assert_eq!(v.len(), 2);
        assert_eq!(
            v[0],
            json!({
                "id": "K::plain", "class": "K", "runtime": "rt", "kind": "pooled", "body": "trivial",
                "tags": ["sdma"], "arch": ["a5", "a2a3"], "devices": 1, "timeout_s": 300.0,
                "retries": 2, "expect_failure": null, "skip_if": [], "kernels": [], "missing_kernels": [],
            })
        );
        let own = &v[1];
        assert_eq!(own["timeout_s"], 1.5);
        assert_eq!(own["retries"], 0);
        assert_eq!(own["tags"], json!(["sdma", "slow"]));
        assert_eq!(own["arch"], json!(["a5"]));
        assert_eq!(own["body"], "compute");
        assert_eq!(
            own["expect_failure"],
            json!({"reason": "known", "expected": "class:result"})
        );
        assert_eq!(own["skip_if"], json!(["never"]));
        assert_eq!(own["kernels"], json!(["vector_add", "gone"]));
    }
}

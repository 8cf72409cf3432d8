//! DESIGN section 5 step 4's sink records: which selectors a lane that escalates writes to its
//! poison sink, so a fresh process re-runs exactly what this one could not.
//!
//! This file owns the records as a pure function of the remaining cases and what the lane already
//! started. It never writes the file ([`crate::sink::SinkWriter`] does, one `O_APPEND` write per
//! record) and never decides to escalate ([`super::heal`] does).

use std::collections::HashSet;

use platform_common::{Code, DeviceId};

use crate::sink::SinkRecord;

/// What an escalating lane knows about one remaining case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remaining<'a> {
    /// `Class::case`.
    pub id: &'a str,
    /// Its class and runtime, when the suite knows the case.
    pub class_runtime: Option<(&'a str, &'a str)>,
}

/// The sink records of the remaining cases, in order: `Class::` for a class none of whose cases
/// started in this lane (the fresh process re-runs it whole), else `Class::case`.
pub fn sink_records(
    rest: &[Remaining<'_>],
    started_classes: &HashSet<String>,
    device: DeviceId,
    reason: &str,
    code: Option<Code>,
) -> Vec<SinkRecord> {
    rest.iter()
        .map(|r| {
            let (class, runtime) = r
                .class_runtime
                .unwrap_or_else(|| (r.id.split("::").next().unwrap_or(r.id), ""));
            let selector = if started_classes.contains(class) {
                r.id.to_owned()
            } else {
                format!("{class}::")
            };
            SinkRecord {
                selector,
                case: r.id.to_owned(),
                runtime: runtime.to_owned(),
                device,
                code,
                reason: format!(
                    "card {device} not recoverable in-process: {reason}; a fresh process re-runs it"
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform_common::error::codes;

    #[test]
    fn sink_selector_table() {
        let started: HashSet<String> = ["A".to_owned()].into();
        let rest = [
            Remaining {
                id: "A::y",
                class_runtime: Some(("A", "rt")),
            },
            Remaining {
                id: "B::z",
                class_runtime: Some(("B", "rt2")),
            },
            Remaining {
                id: "Gone::w",
                class_runtime: None,
            },
        ];
        let records = sink_records(
            &rest,
            &started,
            3,
            "reset not confirmed",
            Some(codes::RT_DRV_INTERNAL_ERROR),
        );
        #[rustfmt::skip]
        let want: &[(&str, &str, &str)] = &[
            // selector,  case,      runtime
            ("A::y",      "A::y",    "rt"),   // a class that started: the case alone
            ("B::",       "B::z",    "rt2"),  // a class not started: the whole class
            ("Gone::",    "Gone::w", ""),     // unknown to the suite: its class, no runtime
        ];
        for (r, &(selector, case, runtime)) in records.iter().zip(want) {
            assert_eq!(
                (r.selector.as_str(), r.case.as_str(), r.runtime.as_str()),
                (selector, case, runtime)
            );
            assert_eq!(r.device, 3);
            assert_eq!(r.code, Some(codes::RT_DRV_INTERNAL_ERROR));
            assert_eq!(
                r.reason,
                "card 3 not recoverable in-process: reset not confirmed; a fresh process re-runs it"
            );
        }
        assert_eq!(records.len(), want.len());
    }
}

//! The code table against CANN's real `rt_error_codes.h` (from the torch-npu wheel that `.ci/run`
//! downloads; `cardguard_test_support::real_headers`): every code the header defines has a row
//! with the header's name, so cardguard classifies every code the runtime can return. Without the
//! wheel the test says plainly that it did not run (and fails where `.ci/run` requires it).

use std::collections::BTreeMap;

use cardguard_test_support::real_headers::{require_or_skip, rt_error_codes_header};
use platform_common::error::{Code, CodeSource, CODE_TABLE};

/// `#define NAME VALUE` lines of the header, by value (`ACL_RT_SUCCESS`, 0, left out).
fn header_codes(text: &str) -> BTreeMap<i32, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("#define") {
            continue;
        }
        let (Some(name), Some(value)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(raw) = value.parse::<i32>() else {
            continue; // the include guard, or a value that is not a decimal code
        };
        if raw == 0 {
            continue;
        }
        assert!(
            out.insert(raw, name.to_owned()).is_none(),
            "the header defines {raw} twice"
        );
    }
    out
}

#[test]
fn every_code_of_the_real_rt_error_codes_h_is_classified() {
    let Some(_) = require_or_skip("every_code_of_the_real_rt_error_codes_h_is_classified") else {
        return;
    };
    let path = rt_error_codes_header().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let real = header_codes(&text);
    assert!(
        real.len() > 100,
        "only {} codes read from {}",
        real.len(),
        path.display()
    );

    let mut bad = Vec::new();
    for (&raw, name) in &real {
        match Code::acl(raw).info() {
            None => bad.push(format!("{raw} {name}: no row (unclassified)")),
            Some(row) if row.name != name => {
                bad.push(format!("{raw}: the table says {}, the header {name}", row.name));
            }
            Some(row) if row.source != CodeSource::RtErrorCodes => {
                bad.push(format!("{raw} {name}: the row cites {:?}", row.source));
            }
            Some(_) => {}
        }
    }
    // And the table claims nothing of the header that the header does not define.
    for row in CODE_TABLE.iter().filter(|r| r.source == CodeSource::RtErrorCodes) {
        if real.get(&row.raw).map(String::as_str) != Some(row.name) {
            bad.push(format!(
                "{} {}: cited to rt_error_codes.h, not in it",
                row.raw, row.name
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches against {}:\n{}",
        bad.len(),
        path.display(),
        bad.join("\n")
    );
}

#[test]
fn the_parser_reads_defines_and_skips_the_guard() {
    let text = "#ifndef X_H\n#define X_H\n#define  ACL_RT_SUCCESS 0 // ok\n#define  A_B   107000 // c\n";
    let got = header_codes(text);
    assert_eq!(
        got.into_iter().collect::<Vec<_>>(),
        vec![(107000, "A_B".to_owned())]
    );
}

//! Reading a libtest run's output: which tests failed.
//!
//! This module owns the parse of libtest's human output (the default format, the one `cargo test`
//! shows): a failed test is named by its result line `test NAME ... FAILED` and again in the closing
//! `failures:` list; both are read, so a result line that a test's stray output glued onto is still
//! found through the list. It never decides what a failure of the binary itself is (see `exec`).

use std::collections::BTreeSet;

/// The names of the tests that failed in one run's stdout, sorted.
pub fn failed_tests(stdout: &str) -> BTreeSet<String> {
    let mut failed = BTreeSet::new();
    let mut in_list = false;
    for line in stdout.lines() {
        if let Some(name) = failed_result_line(line) {
            failed.insert(name.to_owned());
            continue;
        }
        // The closing list: `failures:` then one indented name per line, ended by a blank line
        // or the `test result:` line. (The first `failures:` block holds `---- NAME stdout ----`
        // sections, which are not indented names.)
        if line == "failures:" {
            in_list = true;
            continue;
        }
        if in_list {
            match line.strip_prefix("    ") {
                Some(name) if !name.is_empty() && !name.starts_with(' ') => {
                    failed.insert(name.trim_end().to_owned());
                }
                _ => in_list = false,
            }
        }
    }
    failed
}

/// `test NAME ... FAILED` (optionally followed by a timing, as `-Z report-time` writes it) gives NAME.
fn failed_result_line(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("test ")?;
    let (name, status) = rest.rsplit_once(" ... ")?;
    let status = status.trim_end();
    (status == "FAILED" || status.starts_with("FAILED ")).then_some(name)
}

/// The `test result:` line, when the run got that far (a binary that crashed or was killed did not).
pub fn finished(stdout: &str) -> bool {
    stdout.lines().any(|l| l.starts_with("test result: "))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "\
running 4 tests
test a::passes ... ok
test a::ignored ... ignored, needs a card
test b::fails ... FAILED
test c::slow has been running for over 60 seconds
test c::slow ... FAILED <61.020s>

failures:

---- b::fails stdout ----
thread 'b::fails' panicked at src/b.rs:3:5:
    indented panic text that is not a name
test inside::output ... FAILED? no

---- c::slow stdout ----
boom

failures:
    b::fails
    c::slow
    glued::away

test result: FAILED. 1 passed; 3 failed; 1 ignored; 0 measured; 0 filtered out; finished in 61.02s
";

    #[test]
    fn failed_tests_come_from_result_lines_and_the_closing_list() {
        let got: Vec<String> = failed_tests(RUN).into_iter().collect();
        // glued::away's own result line was lost to stray output; the closing list still names it.
        assert_eq!(got, ["b::fails", "c::slow", "glued::away"]);
        assert!(finished(RUN));
    }

    #[test]
    fn a_clean_or_cut_run_names_no_failure() {
        let clean = "running 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed\n";
        assert!(failed_tests(clean).is_empty());
        assert!(finished(clean));
        let cut = "running 2 tests\ntest a ... ok\n";
        assert!(failed_tests(cut).is_empty());
        assert!(!finished(cut));
        assert!(failed_tests("test result: FAILED. 0 passed; 1 failed\n").is_empty());
    }
}

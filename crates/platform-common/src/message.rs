//! Messages on one line, as every cardguard binary prints its errors: the first paragraph of a
//! message (a clap usage error) without its `error: ` prefix, and an error with its causes
//! (`a: b: c`).
//!
//! This file owns those two renderings, shared by the suite binary and `cargo xtask`. It never
//! decides what is an error nor how a binary exits.

/// The first paragraph of a message on one line, without its `error: ` prefix (a clap message
/// ending in `:` continues on indented lines, e.g. the missing required arguments).
pub fn one_line(text: &str) -> String {
    let para: Vec<&str> = text
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect();
    let line = if para.is_empty() {
        "bad usage".to_owned()
    } else {
        para.join(" ")
    };
    line.strip_prefix("error: ").unwrap_or(&line).to_owned()
}

/// An error and its causes on one line (`a: b: c`), as `merge-reports` prints them.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut s = err.to_string();
    let mut cause = err.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !s.ends_with(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        cause = c.source();
    }
    s.replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_messages_become_one_line_naming_the_bad_part() {
        let bad = "error: invalid value '0' for '--runs <N>': 0 is not in 1..=4294967295\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line(bad),
            "invalid value '0' for '--runs <N>': 0 is not in 1..=4294967295"
        );
        let missing = "error: the following required arguments were not provided:\n  <DIR>...\n\nUsage: xtask merge-reports <DIR>...\n";
        assert_eq!(
            one_line(missing),
            "the following required arguments were not provided: <DIR>..."
        );
    }

    #[test]
    fn error_chains_print_every_cause_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("write /r/report.json")]
        struct Write(#[source] std::io::Error);
        let io = std::io::Error::new(std::io::ErrorKind::IsADirectory, "Is a directory");
        assert_eq!(error_chain(&Write(io)), "write /r/report.json: Is a directory");
        #[derive(Debug, thiserror::Error)]
        #[error("outer: inner")]
        struct Repeats(#[source] std::io::Error);
        let inner = std::io::Error::other("inner");
        assert_eq!(
            error_chain(&Repeats(inner)),
            "outer: inner",
            "a cause the message ends with is not repeated"
        );
    }
}

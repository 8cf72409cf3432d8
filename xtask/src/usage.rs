//! Usage errors of `cargo xtask` on one line.
//!
//! This module owns turning clap's message into the one line a bad flag gets (exit status 2 is
//! the caller's). It never parses flags itself.

/// A clap message's first paragraph on one line, without its `error: ` prefix (a bad value's line
/// already names the flag and the value; a missing argument's line continues on indented lines).
pub fn one_line(text: &str) -> String {
    let para: Vec<&str> = text
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect();
    let line = para.join(" ");
    line.strip_prefix("error: ").unwrap_or(&line).to_owned()
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
}

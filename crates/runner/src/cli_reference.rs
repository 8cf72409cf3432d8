//! `--cli-reference`: the suite binary's flags as Markdown, from the clap definitions of
//! [`crate::cli`] (hidden flags left out), for `cargo xtask docs`, which writes them into
//! docs/reference/cli.md. Alone on the command line it needs no `--arch`; with anything else
//! it is clap's usage error (the flag is `exclusive`).

use std::ffi::OsString;

use clap::CommandFactory;

use crate::cli::Cli;

/// Whether the command line is exactly `PROGRAM --cli-reference`.
pub fn asked(args: &[OsString]) -> bool {
    args.len() == 2 && args[1] == "--cli-reference"
}

/// The suite binary's part of docs/reference/cli.md.
pub fn markdown() -> String {
    let options = clap_markdown::MarkdownOptions::new()
        .title("`cardguard-suite`: a suite binary's flags".to_owned())
        .show_footer(false)
        .show_table_of_contents(false);
    let cmd = Cli::command();
    let mut text = clap_markdown::help_markdown_command_custom(&cmd, &options);
    // A flag that takes no value on the command line (`--no-progress`, an optional bool) is
    // shown without the placeholder clap-markdown gives every setting.
    for arg in cmd.get_arguments() {
        let takes_none = arg.get_num_args().is_some_and(|n| n.max_values() == 0);
        let Some(long) = arg.get_long().filter(|_| takes_none) else {
            continue;
        };
        let name = match arg.get_value_names() {
            Some([name, ..]) => name.to_string(),
            _ => arg.get_id().as_str().to_ascii_uppercase(),
        };
        text = text.replace(&format!("`--{long} <{name}>`"), &format!("`--{long}`"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_flag_alone_asks_for_the_reference() {
        let line = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(asked(&line(&["s", "--cli-reference"])));
        assert!(!asked(&line(&["s", "--cli-reference", "--arch", "a5"])));
        assert!(!asked(&line(&["s", "--list"])));
        let text = markdown();
        assert!(text.contains("* `--no-progress` — "), "{text}");
        assert!(text.contains("* `--arch <ARCH>` — "), "{text}");
        assert!(!text.contains("--lane"), "hidden flags stay out: {text}");
    }
}

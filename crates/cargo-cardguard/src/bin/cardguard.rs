//! `cardguard`: cardguard's commands outside a Rust suite binary. Its first subcommand is
//! `pytest` ([`cargo_cardguard::pytest`]).

use std::ffi::OsString;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    let _program = args.next();
    let rest: Vec<OsString> = args.collect();
    match rest.first().and_then(|a| a.to_str()) {
        Some("pytest") => cargo_cardguard::pytest::main(rest[1..].to_vec()),
        Some("-h" | "--help") | None => {
            println!("usage: cardguard pytest [--arch ARCH] [cardguard flags] -- [pytest args]");
            if rest.is_empty() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            }
        }
        Some(other) => {
            eprintln!("error: unknown subcommand {other:?} (known: pytest)");
            ExitCode::from(2)
        }
    }
}

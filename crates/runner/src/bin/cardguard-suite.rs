//! `cardguard-suite`: the suite binary. It registers the built-in suite and is the dispatcher, or,
//! started with the lane arguments, a lane (DESIGN section 2). `cargo xtask onboard` builds and
//! runs it.

fn main() -> std::process::ExitCode {
    runner::app::main(runner::suite::builtin)
}

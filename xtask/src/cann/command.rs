//! The `cann-check` command: where to look, the check, one line per mismatch.

use std::path::PathBuf;
use std::process::ExitCode;

use super::install::discover;
use super::unit::check;
use crate::bindgen::{workspace_root, HEADER};

/// The variable naming the CANN toolkit (`.../ascend-toolkit/latest`).
pub const ENV_ASCEND_HOME: &str = "ASCEND_HOME_PATH";

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The driver's install (holding `ascend_hal.h`); default: `driver` beside the toolkit's
    /// `ascend-toolkit` directory, when it exists.
    #[arg(long)]
    driver: Option<PathBuf>,
}

/// Runs the command.
pub fn run(args: Args) -> ExitCode {
    let Some(home) = std::env::var_os(ENV_ASCEND_HOME).filter(|v| !v.is_empty()) else {
        println!(
            "{ENV_ASCEND_HOME} is not set: no CANN install here to check against (nothing checked). \
             Run this on a card host with CANN's environment set (set_env.sh)."
        );
        return ExitCode::SUCCESS;
    };
    let home = PathBuf::from(home);
    if !home.is_dir() {
        eprintln!("error: {ENV_ASCEND_HOME}={} is not a directory", home.display());
        return ExitCode::from(2);
    }
    let mut roots = vec![home.clone()];
    let driver = args.driver.or_else(|| {
        let guess = home.ancestors().nth(2).map(|p| p.join("driver"))?;
        guess.is_dir().then_some(guess)
    });
    if let Some(d) = driver {
        if !d.is_dir() {
            eprintln!("error: --driver {} is not a directory", d.display());
            return ExitCode::from(2);
        }
        roots.push(d);
    }
    let (real, missing) = discover(&roots);
    let searched = roots
        .iter()
        .map(|r| r.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    for m in &missing {
        println!("{m}: no header under {searched} declares it");
    }
    if real.includes.is_empty() {
        eprintln!("error: no CANN header found under {searched}");
        return ExitCode::from(2);
    }
    let outcome = match check(&workspace_root().join(HEADER), &real) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {}", platform_common::message::one_line(&e.to_string()));
            return ExitCode::from(2);
        }
    };
    for m in &outcome.mismatches {
        println!("{m}");
    }
    for a in &outcome.absent {
        println!("{a}: cardguard declares it, the installed headers do not");
    }
    let bad = missing.len() + outcome.mismatches.len() + outcome.absent.len();
    println!(
        "cann-check: {} assertions against {}; {bad} mismatch(es)",
        outcome.checked,
        real.includes.join(", ")
    );
    if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

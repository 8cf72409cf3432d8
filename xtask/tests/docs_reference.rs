//! docs/reference/environment.md names every variable the platform reads
//! (`platform_common::env::PLATFORM_VARS`) and the config file's two (`CARDGUARD_CONFIG`,
//! `CARDGUARD_PROFILE`); the run settings' own variables are held to docs/reference/config-keys.md
//! by the runner's config tests.

use std::path::Path;

#[test]
fn the_environment_reference_names_every_variable() {
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/reference/environment.md"),
    )
    .unwrap();
    let config = [runner::config::ENV_CONFIG, runner::config::ENV_PROFILE];
    let missing: Vec<&str> = platform_common::env::PLATFORM_VARS
        .iter()
        .copied()
        .chain(config)
        .filter(|v| !page.contains(&format!("`{v}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/reference/environment.md does not name {missing:?}"
    );
}

//! The README's suite ("Your own suite") is `examples/readme_suite.rs` word for word, so the
//! example that `cargo test` builds is the text a reader copies.

use std::path::Path;

#[test]
fn the_readme_suite_is_the_example_that_builds() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(crate_dir.join("../../README.md")).unwrap();
    let start = readme.find("```rust\n").expect("the README has a ```rust block") + "```rust\n".len();
    let end = start + readme[start..].find("```").expect("the block ends");
    let example = std::fs::read_to_string(crate_dir.join("examples/readme_suite.rs")).unwrap();
    assert_eq!(
        &readme[start..end],
        example,
        "the README's suite and examples/readme_suite.rs differ"
    );
}

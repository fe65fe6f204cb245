//! The README's vertex-program block is the code of `examples/kcore.rs`, which `.ci/run`
//! runs (it checks itself against sequential peeling); the README's other Rust block runs as
//! a doctest (`src/lib.rs`).

#[test]
fn readme_kcore_block_is_the_example() {
    let readme = include_str!("../README.md");
    let example = include_str!("../examples/kcore.rs");
    let start = readme
        .find("```rust,ignore\n")
        .expect("the README has the k-core block")
        + "```rust,ignore\n".len();
    let block = &readme[start..start + readme[start..].find("```").expect("the block ends")];
    assert!(block.contains("impl Program for KCore"), "{block}");
    assert!(
        example.contains(block),
        "the README's k-core block differs from examples/kcore.rs:\n{block}"
    );
    let lines = block
        .lines()
        .skip_while(|l| !l.starts_with("struct KCore"))
        .count();
    assert!(lines < 40, "the custom program takes {lines} lines");
}

//! Compile-time behaviour of `#[reverse_diff]`: every construct it rejects (`tests/ui`, each with
//! its expected compiler output in a committed `.stderr`) and tricky code it accepts
//! (`tests/ui-pass`).
//!
//! To regenerate the `.stderr` files after a deliberate change of message, run
//! `TRYBUILD=overwrite cargo test --test compiletest` and read every changed file.

/// Rejected code fails with exactly the committed messages; accepted code compiles and runs.
#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
    cases.pass("tests/ui-pass/*.rs");
}

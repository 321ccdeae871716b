//! The name `#[reverse_diff]` gives the type that replaces `f64` is the user's own here: inside
//! the generated function it would mean the type parameter instead, so it is rejected.

use ad::reverse_diff;

#[allow(dead_code)]
type DifferentiableF64 = f64;

#[reverse_diff]
fn scaled(x: f64) -> f64 {
    let k: DifferentiableF64 = 2.0;
    k * x
}

fn main() {}

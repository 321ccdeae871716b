//! A primitive is already one record: `primitive = ..` and `fused` together are rejected.

use ad::reverse_diff;

fn square_partials(x: f64) -> f64 {
    2.0 * x
}

#[reverse_diff(primitive = square_partials, fused)]
fn square(x: f64) -> f64 {
    x * x
}

fn main() {}

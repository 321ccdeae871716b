//! `primitive = ..` names the function that returns the partial derivatives: anything else
//! (here a closure) is rejected.

use ad::reverse_diff;

#[reverse_diff(primitive = |x: f64| 2.0 * x)]
fn square(x: f64) -> f64 {
    x * x
}

fn main() {}

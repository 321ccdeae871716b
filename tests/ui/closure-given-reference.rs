//! A closure whose parameter is typed `f64` takes constant data or the differentiable scalar,
//! but not a reference to an `f64` (a mistake in plain Rust too): the message says to
//! dereference it.

use ad::reverse_diff;

const NODES: [f64; 2] = [0.5, 1.5];

#[reverse_diff]
fn by_reference(w: f64) -> f64 {
    let g = |u: f64| w * u;
    NODES.iter().map(|u| g(u)).sum::<f64>()
}

fn main() {}

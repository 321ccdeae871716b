//! A differentiable value written into constant data: a `#[no_grad]` `f64`, or a `let` of
//! constant data, is a plain `f64`, which cannot carry the derivative. The macro says how to
//! make it differentiable (`let mut p: f64 = p;`); constants written there compile
//! (`tests/compound_assignment.rs`). An element of a copied sequence of constant data names the
//! sequence, and the `let` that makes it differentiable (`tests/constant_arguments.rs`).

use ad::reverse_diff;

#[reverse_diff]
fn weighted(x: f64, #[no_grad] mut p: f64) -> f64 {
    p *= x;
    x * p
}

#[reverse_diff]
fn accumulated(x: f64, #[no_grad] data: &[f64]) -> f64 {
    let mut acc = data[0];
    acc = acc + x * 2.0;
    x * acc
}

#[reverse_diff]
fn evolved(k: f64, #[no_grad] y0: &[f64]) -> f64 {
    let mut y = y0.to_vec();
    for i in 0..y.len() {
        y[i] = y[i] * k;
    }
    y[0]
}

#[reverse_diff]
fn copied_array(k: f64, #[no_grad] arr: &[f64; 2]) -> f64 {
    let mut a = *arr;
    a[1] += k;
    a[1]
}

fn main() {}

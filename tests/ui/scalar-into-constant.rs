//! A differentiable value written into constant data the macro cannot make hold scalars: a
//! `#[no_grad]` `f64` is a plain `f64`, which cannot carry the derivative, and so is an array
//! copied from a local rather than from a parameter (a `let` of a copied `Vec`, array or number takes `f64` written
//! in, as a write of a scalar asks: `tests/constant_arguments.rs`). The macro says how to make
//! it differentiable (`let mut p: f64 = p;`); constants written there compile
//! (`tests/compound_assignment.rs`). An element of an array names the array, and the `let` that
//! makes it differentiable.

use ad::reverse_diff;

#[reverse_diff]
fn weighted(x: f64, #[no_grad] mut p: f64) -> f64 {
    p *= x;
    x * p
}

#[reverse_diff]
fn copied_twice(k: f64, #[no_grad] arr: &[f64; 2]) -> f64 {
    let first = *arr;
    let mut a = first;
    a[1] += k;
    a[1]
}

fn main() {}

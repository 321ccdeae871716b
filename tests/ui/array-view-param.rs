//! A mutable ndarray view as a differentiable parameter: it would be written through, like
//! `&mut`. (A view that only reads, `ArrayView1<f64>`, is differentiable: `tests/ndarray.rs`.)

use ad::reverse_diff;
use ndarray::ArrayViewMut1;

#[reverse_diff]
fn norm_squared(x: ArrayViewMut1<f64>) -> f64 {
    x.dot(&x)
}

fn main() {}

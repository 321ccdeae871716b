//! A differentiable ndarray view taken by reference: a view is already a borrow, and its
//! companions seed an owned copy of a view taken by value (`x: ArrayView1<f64>`).

use ad::reverse_diff;
use ndarray::ArrayView1;

#[reverse_diff]
fn norm_squared(x: &ArrayView1<f64>) -> f64 {
    x.dot(x)
}

fn main() {}

use ad::reverse_diff;
use ndarray::ArrayView1;

#[reverse_diff]
fn norm_squared(x: ArrayView1<f64>) -> f64 {
    x.dot(&x)
}

fn main() {}

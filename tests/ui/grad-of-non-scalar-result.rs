// `_grad` exists only for a function returning exactly `f64`: a vector result has no single
// gradient.
use ad::reverse_diff;

#[reverse_diff]
fn scaled(x: f64, v: [f64; 2]) -> [f64; 2] {
    [x * v[0], x * v[1]]
}

fn main() {
    let _ = scaled_grad(1.0, [2.0, 3.0]);
}

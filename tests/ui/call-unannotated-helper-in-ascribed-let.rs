// A plain `f64` helper called on a differentiated value in `let y: f64 = helper(..)`, where
// the macro takes the call into one record with its argument: after rustc's mismatch, a
// message says what to write (annotate the helper with `#[reverse_diff]`, or make it generic
// over `S: ad::Real`).
use ad::reverse_diff;

fn helper(x: f64) -> f64 {
    x * x + 1.0
}

#[reverse_diff]
fn outer(x: f64) -> f64 {
    let y: f64 = helper(x * 2.0);
    y * x
}

fn main() {}

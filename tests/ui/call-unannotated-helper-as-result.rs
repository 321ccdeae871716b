// When the helper's result is also the function's result, rustc reports the result too.
use ad::reverse_diff;

fn helper(x: f64) -> f64 {
    x * x + 1.0
}

#[reverse_diff]
fn outer(x: f64) -> f64 {
    helper(x)
}

fn main() {}

// A plain `f64` helper cannot take the differentiated value: annotate the helper with
// `#[reverse_diff]`, or make it generic over `S: ad::Real`.
use ad::reverse_diff;

fn helper(x: f64) -> f64 {
    x * x + 1.0
}

#[reverse_diff]
fn outer(x: f64) -> f64 {
    x * helper(x)
}

fn main() {}

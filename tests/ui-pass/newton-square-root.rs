// Newton's iteration with a fixed count.
use ad::reverse_diff;

#[reverse_diff]
fn newton_sqrt(a: f64) -> f64 {
    let mut x = a;
    for _ in 0..30 {
        x = x - (x * x - a) / (2.0 * x);
    }
    x
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (value, derivative) = newton_sqrt_grad(2.0);
    assert!((value - 2f64.sqrt()).abs() < 1e-14);
    check_gradient(|p| newton_sqrt(p[0]), &[2.0], &[derivative]);
}

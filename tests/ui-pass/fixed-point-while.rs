// A fixed point found by a `while` convergence loop.
use ad::reverse_diff;

#[reverse_diff]
fn fixed_point(a: f64) -> f64 {
    let mut x = 0.5;
    let mut change = 1.0;
    let mut iterations = 0;
    while change > 1e-14 && iterations < 500 {
        let next = (a * x).cos();
        change = (next - x).abs();
        x = next;
        iterations += 1;
    }
    x
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (x, dx) = fixed_point_grad(0.8);
    // Implicit function theorem at x = cos(a x): dx/da = -x sin(a x) / (1 + a sin(a x)).
    let s = (0.8 * x).sin();
    assert!((dx - (-x * s / (1.0 + 0.8 * s))).abs() < 1e-9);
    check_gradient(|p| fixed_point(p[0]), &[0.8], &[dx]);
}

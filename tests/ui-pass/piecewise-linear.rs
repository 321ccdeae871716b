// Piecewise-linear interpolation: a `while` search over constant knots.
use ad::reverse_diff;

#[reverse_diff]
fn interpolate(x: f64, #[no_grad] knots: &[f64], #[no_grad] values: &[f64]) -> f64 {
    let mut i = 0;
    while i + 2 < knots.len() && x > knots[i + 1] {
        i += 1;
    }
    let t = (x - knots[i]) / (knots[i + 1] - knots[i]);
    values[i] * (1.0 - t) + values[i + 1] * t
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (knots, values) = ([0.0, 1.0, 2.5, 4.0], [1.0, 3.0, 2.0, 5.0]);
    for x in [0.4, 1.7, 3.2] {
        let (_, dx) = interpolate_grad(x, &knots, &values);
        check_gradient(|p| interpolate(p[0], &knots, &values), &[x], &[dx]);
    }
}

// Ridge regression: data misfit plus a penalty, owned weights.
use ad::reverse_diff;

#[reverse_diff]
fn ridge(weights: Vec<f64>, penalty: f64, #[no_grad] xs: &[f64], #[no_grad] ys: &[f64]) -> f64 {
    let mut misfit = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        let prediction = weights[0] + weights[1] * x + weights[2] * x * x;
        misfit += (prediction - y).powi(2);
    }
    let norm: f64 = weights.iter().map(|w| w * w).sum();
    misfit + penalty * norm
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (xs, ys) = ([0.0, 0.5, 1.0, 1.5], [1.0, 1.4, 2.1, 3.3]);
    let (_, (dw, dp)) = ridge_grad(vec![0.9, 0.6, 0.5], 0.1, &xs, &ys);
    check_gradient(
        |p| ridge(p[..3].to_vec(), p[3], &xs, &ys),
        &[0.9, 0.6, 0.5, 0.1],
        &[dw[0], dw[1], dw[2], dp],
    );
}

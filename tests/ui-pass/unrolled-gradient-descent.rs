// The loss after gradient descent steps, differentiated in the learning rate.
use ad::reverse_diff;

#[reverse_diff]
fn loss_after_descent(start: f64, rate: f64, steps: usize) -> f64 {
    let loss = |w: f64| (w - 3.0).powi(2) + 0.1 * w.powi(4);
    let gradient = |w: f64| 2.0 * (w - 3.0) + 0.4 * w.powi(3);
    let mut w = start;
    for _ in 0..steps {
        w -= rate * gradient(w);
    }
    loss(w)
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (_, (ds, dr)) = loss_after_descent_grad(0.0, 0.05, 15);
    check_gradient(
        |p| loss_after_descent(p[0], p[1], 15),
        &[0.0, 0.05],
        &[ds, dr],
    );
}

// A stable log-sum-exp over a Vec.
use ad::reverse_diff;

#[reverse_diff]
fn log_sum_exp(xs: Vec<f64>) -> f64 {
    let mut largest = xs[0];
    for &x in &xs[1..] {
        if x > largest {
            largest = x;
        }
    }
    largest + xs.iter().map(|x| (x - largest).exp()).sum::<f64>().ln()
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let xs = vec![0.5, 2.5, -1.0, 1.7];
    let (_, gradient) = log_sum_exp_grad(xs.clone());
    check_gradient(|p| log_sum_exp(p.to_vec()), &xs, &gradient);
}

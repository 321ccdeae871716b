// A `loop` with `break value` and a labelled `continue`.
use ad::reverse_diff;

#[reverse_diff]
fn first_large_partial_sum(xs: &[f64], threshold: f64) -> f64 {
    let mut total = 0.0;
    let mut i = 0;
    loop {
        if i == xs.len() {
            break total;
        }
        let x = xs[i];
        i += 1;
        if x < 0.0 {
            continue;
        }
        total += x * x;
        if total > threshold {
            break total * threshold;
        }
    }
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let xs = [0.5, -1.0, 1.2, 0.8, 2.0];
    let (_, (dx, dt)) = first_large_partial_sum_grad(&xs, 1.5);
    let mut x = xs.to_vec();
    x.push(1.5);
    let mut g = dx.clone();
    g.push(dt);
    check_gradient(|p| first_large_partial_sum(&p[..5], p[5]), &x, &g);
}

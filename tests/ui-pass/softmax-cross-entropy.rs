// Softmax cross-entropy with a stabilising shift and a class index.
use ad::reverse_diff;

#[reverse_diff]
fn cross_entropy(logits: &[f64], class: usize) -> f64 {
    let shift = logits.iter().fold(f64::NEG_INFINITY, |m, &z| m.max(z));
    let total: f64 = logits.iter().map(|z| (z - shift).exp()).sum();
    total.ln() + shift - logits[class]
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let logits = vec![0.3, -1.2, 2.0, 0.7];
    let (_, gradient) = cross_entropy_grad(&logits, 2);
    check_gradient(|p| cross_entropy(p, 2), &logits, &gradient);
}

use ad::reverse_diff;

#[reverse_diff]
fn weighted(#[no_grad] x: f64, #[no_grad] weights: &[f64]) -> f64 {
    weights.iter().map(|w| w * x).sum::<f64>()
}

fn main() {}

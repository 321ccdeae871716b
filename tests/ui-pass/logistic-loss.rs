// Logistic regression loss over constant data rows.
use ad::reverse_diff;

#[reverse_diff]
fn logistic_loss(
    w: &[f64],
    bias: f64,
    #[no_grad] rows: &[Vec<f64>],
    #[no_grad] labels: &[f64],
) -> f64 {
    let mut loss = 0.0;
    for (row, label) in rows.iter().zip(labels) {
        let z = row.iter().zip(w).map(|(x, wi)| wi * x).sum::<f64>() + bias;
        let p = 1.0 / (1.0 + (-z).exp());
        loss -= label * p.ln() + (1.0 - label) * (1.0 - p).ln();
    }
    loss / rows.len() as f64
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let rows = vec![vec![1.0, 2.0], vec![-0.5, 0.3], vec![0.2, -1.0]];
    let labels = [1.0, 0.0, 1.0];
    let w = [0.4, -0.2];
    let (_, (dw, db)) = logistic_loss_grad(&w, 0.1, &rows, &labels);
    check_gradient(
        |p| logistic_loss(&p[..2], p[2], &rows, &labels),
        &[w[0], w[1], 0.1],
        &[dw[0], dw[1], db],
    );
}

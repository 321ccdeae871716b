// Squared norm of a matrix-vector product over nested vectors.
use ad::reverse_diff;

#[reverse_diff]
fn mat_vec_norm(matrix: &[Vec<f64>], v: &[f64]) -> f64 {
    let product: Vec<f64> = matrix
        .iter()
        .map(|row| row.iter().zip(v).map(|(a, b)| a * b).sum::<f64>())
        .collect();
    product.iter().map(|y| y * y).sum()
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let m = vec![vec![1.0, 2.0], vec![-0.5, 0.3], vec![0.2, 1.0]];
    let v = vec![0.4, -1.1];
    let (_, (dm, dv)) = mat_vec_norm_grad(&m, &v);
    let flat: Vec<f64> = m.iter().flatten().chain(&v).copied().collect();
    let gradient: Vec<f64> = dm.iter().flatten().chain(&dv).copied().collect();
    let f = |p: &[f64]| {
        mat_vec_norm(
            &[p[0..2].to_vec(), p[2..4].to_vec(), p[4..6].to_vec()],
            &p[6..8],
        )
    };
    check_gradient(f, &flat, &gradient);
}

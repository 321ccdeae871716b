// Cosine similarity of two slices.
use ad::reverse_diff;

#[reverse_diff]
fn cosine_similarity(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb = b.iter().map(|y| y * y).sum::<f64>().sqrt();
    dot / (na * nb)
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (a, b) = (vec![1.0, 2.0, -0.5], vec![0.3, -1.0, 2.0]);
    let (_, (da, db)) = cosine_similarity_grad(&a, &b);
    let x: Vec<f64> = a.iter().chain(&b).copied().collect();
    let g: Vec<f64> = da.iter().chain(&db).copied().collect();
    check_gradient(|p| cosine_similarity(&p[..3], &p[3..]), &x, &g);
}

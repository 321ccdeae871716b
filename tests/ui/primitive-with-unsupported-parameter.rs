// A primitive or fused function takes differentiable parameters of type f64 or &[f64] only.
use ad::reverse_diff;

#[reverse_diff(primitive = norm_partials)]
fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

fn norm_partials(v: [f64; 3]) -> [f64; 3] {
    let n = norm(v);
    [v[0] / n, v[1] / n, v[2] / n]
}

#[reverse_diff(fused)]
fn halves(x: f64) -> Vec<f64> {
    vec![x / 2.0]
}

fn main() {}

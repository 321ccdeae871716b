// The determinant of a 3×3 matrix of nested arrays.
use ad::reverse_diff;

#[reverse_diff]
fn determinant(m: &[[f64; 3]; 3]) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let m = [[2.0, -1.0, 0.5], [0.3, 1.5, 2.0], [1.0, 0.0, -0.7]];
    let (_, dm) = determinant_grad(&m);
    let flat: Vec<f64> = m.iter().flatten().copied().collect();
    let gradient: Vec<f64> = dm.iter().flatten().copied().collect();
    let f = |p: &[f64]| determinant(&[[p[0], p[1], p[2]], [p[3], p[4], p[5]], [p[6], p[7], p[8]]]);
    check_gradient(f, &flat, &gradient);
}

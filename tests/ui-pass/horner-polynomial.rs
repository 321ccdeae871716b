// Horner's rule over a coefficient slice.
use ad::reverse_diff;

#[reverse_diff]
fn horner(coefficients: &[f64], x: f64) -> f64 {
    let mut result = 0.0;
    for c in coefficients.iter().rev() {
        result = result * x + c;
    }
    result
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (c, x) = ([1.0, -2.0, 0.5, 3.0], 0.7);
    let (_, (dc, dx)) = horner_grad(&c, x);
    check_gradient(
        |p| horner(&p[..4], p[4]),
        &[c[0], c[1], c[2], c[3], x],
        &[dc[0], dc[1], dc[2], dc[3], dx],
    );
}

//! The check every pass case runs on its gradient, shared by including this file with
//! `#[path = "support/check_gradient.rs"] mod support;` (trybuild builds each case alone).

/// The central difference of `f` at `x` along each coordinate, against which the gradient is
/// checked (step `1e-6·max(1, |xᵢ|)`, tolerance `1e-6` relative).
pub fn check_gradient(f: impl Fn(&[f64]) -> f64, x: &[f64], gradient: &[f64]) {
    assert_eq!(x.len(), gradient.len());
    for i in 0..x.len() {
        let h = 1e-6 * x[i].abs().max(1.0);
        let mut point = x.to_vec();
        point[i] = x[i] + h;
        let above = f(&point);
        point[i] = x[i] - h;
        let below = f(&point);
        let central = (above - below) / (2.0 * h);
        assert!(
            (gradient[i] - central).abs() <= 1e-6 * central.abs().max(1.0),
            "entry {i}: gradient {}, central difference {central}",
            gradient[i]
        );
    }
}

// A deprecated function, fused or not: only its users' calls warn, never the function's own
// call of the hidden copy that holds its body (denied here, so such a warning fails the build).
#![deny(deprecated)]
use ad::reverse_diff;

/// Superseded.
#[deprecated = "use `product_sine` instead"]
#[reverse_diff(fused)]
pub fn fused_product_sine(x: f64, y: f64) -> f64 {
    x * y + x.sin()
}

/// Superseded.
#[deprecated = "use `product_sine` instead"]
#[reverse_diff]
pub fn old_product_sine(x: f64, y: f64) -> f64 {
    x * y + x.sin()
}

#[allow(deprecated)]
#[reverse_diff]
fn both(x: f64) -> f64 {
    fused_product_sine(x, 2.0) + old_product_sine(x, 3.0)
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (_, dx) = both_grad(0.5);
    check_gradient(|p| both(p[0]), &[0.5], &[dx]);
}

// A `#[no_grad]` plain `f64` stays `f64` and has no gradient entry; a `usize` is a constant too.
use ad::reverse_diff;

#[reverse_diff]
fn scaled_power(x: f64, #[no_grad] scale: f64, n: usize) -> f64 {
    scale * x.powi(n as i32)
}

fn main() {
    let value: f64 = scaled_power(2.0, 3.0, 2);
    let (graded_value, gradient): (f64, f64) = scaled_power_grad(2.0, 3.0, 2);
    assert_eq!(graded_value, value);
    // d/dx 3·x² = 6·x = 12 at x = 2.
    assert_eq!(gradient, 12.0);
}

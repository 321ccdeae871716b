// A type parameter that is not a float type (here an index type) does not trip the check for
// functions that are already generic over their float type.
use ad::reverse_diff;

#[reverse_diff]
fn pick<I: Into<usize> + Copy>(xs: &[f64], index: I) -> f64 {
    xs[index.into()] * 2.0
}

fn main() {
    let (value, gradient) = pick_grad(&[1.0, 4.0, 9.0], 1u8);
    assert_eq!(value, 8.0);
    // Only the picked element contributes, with slope 2.
    assert_eq!(gradient, vec![0.0, 2.0, 0.0]);
}

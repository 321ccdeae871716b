// A `&mut` on a constant parameter is accepted (it holds no `f64`), as are mutable locals.
use ad::reverse_diff;

#[reverse_diff]
fn counted_square(x: f64, calls: &mut usize) -> f64 {
    *calls += 1;
    let mut y = x;
    y *= x;
    y
}

fn main() {
    let mut calls = 0;
    let (value, gradient) = counted_square_grad(3.0, &mut calls);
    assert_eq!(value, 9.0);
    // d/dx x² = 2·x.
    assert_eq!(gradient, 6.0);
    assert_eq!(calls, 1);
}

// A loop that writes a vector through `iter_mut` while it reads the same vector: the borrow
// checker's one error, as without the attribute (the macro leaves the loop as written).
use ad::reverse_diff;

#[reverse_diff]
fn scaled(x: &[f64], c: f64) -> f64 {
    let mut y = x.to_vec();
    for (a, b) in y.iter_mut().zip(&y) {
        *a = *b * c;
    }
    y.iter().sum::<f64>()
}

fn main() {
    let _ = scaled(&[1.0, 2.0], 3.0);
}

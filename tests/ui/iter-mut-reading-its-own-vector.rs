// A loop that writes a vector through `iter_mut` while its term reads the same vector: the
// borrow checker's one error, as without the attribute (the macro leaves the loop as written).
use ad::reverse_diff;

#[reverse_diff]
fn scaled(x: &[f64], c: f64) -> f64 {
    let mut y = x.to_vec();
    for (j, a) in y.iter_mut().enumerate() {
        *a = y[j] * c;
    }
    y.iter().sum::<f64>()
}

fn main() {
    let _ = scaled(&[1.0, 2.0], 3.0);
}

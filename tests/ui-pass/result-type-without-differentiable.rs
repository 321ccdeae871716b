// A result type that does not derive `Differentiable` still compiles: the function and its
// value work, and only `f_vjp`, `f_jacobian` and `f_jvp` cannot be called.
use ad::reverse_diff;

struct Stats<T> {
    mean: T,
    count: usize,
}

#[reverse_diff]
fn stats(xs: &[f64]) -> Stats<f64> {
    Stats {
        mean: xs.iter().sum::<f64>() / xs.len() as f64,
        count: xs.len(),
    }
}

#[reverse_diff]
fn with_count(x: f64) -> (f64, usize) {
    (x * 2.0, 1)
}

fn main() {
    let s = stats(&[1.0, 3.0]);
    assert_eq!((s.mean, s.count), (2.0, 2));
    assert_eq!(with_count(1.5), (3.0, 1));
}

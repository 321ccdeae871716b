// After a rejection, `f` is still the ordinary function and `f_grad` still exists, so the only
// error is the macro's own.
use ad::reverse_diff;

#[reverse_diff]
const fn f(x: f64) -> f64 {
    x * 2.0
}

fn main() {
    let doubled: f64 = f(1.0);
    let _ = doubled;
    let _ = f_grad;
}

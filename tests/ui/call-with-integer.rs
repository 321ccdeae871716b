//! An annotated function over `f64` called with an integer (or an `f32`): in plain Rust the same
//! mismatch; here the runtime's traits say what the function takes.

use ad::reverse_diff;

#[reverse_diff]
fn square(x: f64) -> f64 {
    x * x
}

fn main() {
    let _ = square(2);
}

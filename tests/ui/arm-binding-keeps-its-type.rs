//! A `match` arm whose value is a name its pattern binds keeps the type rustc gives it, here an
//! `i32`, even spelled with a capital like a constant: returning it from a function over `f64`
//! fails as in plain Rust, where constant data in an arm that binds nothing it reads
//! (`None => lo`) is made a scalar (`tests/constant_arguments.rs`).

use ad::reverse_diff;

#[reverse_diff]
#[allow(non_snake_case)]
fn chosen(x: f64, #[no_grad] K: f64) -> f64 {
    match x as i32 {
        0 => x,
        K => K,
    }
}

fn main() {}

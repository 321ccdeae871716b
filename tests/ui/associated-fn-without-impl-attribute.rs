//! An associated function without `self` that does not name `Self`, annotated alone: the
//! attribute sees only the function, not the `impl` around it, so its companions call it as a
//! free function, which does not exist. Put `#[reverse_diff]` on the `impl` block too (or name
//! `Self` in the function).

use ad::reverse_diff;

struct Model;

impl Model {
    #[reverse_diff]
    fn scaled(x: f64) -> f64 {
        2.0 * x
    }
}

fn main() {}

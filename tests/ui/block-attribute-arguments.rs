//! `#[reverse_diff]` on an `impl` block or a trait only marks where its methods' companions go:
//! arguments belong on the methods, and are rejected on the block.

use ad::reverse_diff;

struct Model;

#[reverse_diff(fused)]
impl Model {
    #[reverse_diff]
    fn square(x: f64) -> f64 {
        x * x
    }
}

#[reverse_diff(fused)]
trait Loss {
    #[reverse_diff]
    fn cube(x: f64) -> f64 {
        x * x * x
    }
}

fn main() {}

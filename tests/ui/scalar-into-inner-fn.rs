//! A differentiable value given to a plain `fn` over `f64` declared in the body: no derivative
//! goes through it. The macro says to annotate it (`#[reverse_diff]`) or write it generic; one
//! given constant data compiles (`tests/nested_items_and_macros.rs`).

use ad::reverse_diff;

#[reverse_diff]
fn logistic_loss(w: f64, x: f64) -> f64 {
    fn softplus(z: f64) -> f64 {
        (1.0 + z.exp()).ln()
    }
    softplus(-w * x)
}

fn main() {}

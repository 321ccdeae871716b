//! `#[reverse_diff]` needs a body to differentiate: on a trait method declaration (alone, or
//! inside a trait marked `#[reverse_diff]`) it is rejected with what to write instead.

use ad::reverse_diff;

trait Loss {
    #[reverse_diff]
    fn loss(&self, w: &[f64]) -> f64;
}

#[reverse_diff]
trait Model {
    #[reverse_diff]
    fn predict(&self, x: f64) -> f64;

    /// A default method still expands.
    #[reverse_diff]
    fn square(x: f64) -> f64 {
        x * x
    }
}

fn main() {}

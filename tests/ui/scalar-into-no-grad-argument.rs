//! A differentiable value passed where the function called takes a `#[no_grad]` `f64`: the
//! recursion's own parameter, given a real or a `let` started from a literal and changed since
//! (a scalar, which could take a derivative), and a sibling method's in both call forms. The
//! macro says to remove `#[no_grad]` or compute the argument from constant data; computed
//! constants passed there compile (`tests/written_adjoints.rs`, `tests/constant_arguments.rs`).

use ad::reverse_diff;

#[reverse_diff]
fn halving(a: &[f64], x: f64, #[no_grad] s: f64, n: usize) -> f64 {
    if n == 0 {
        return a[0] * s * x;
    }
    let rest: f64 = halving(a, x, x * 0.5, n - 1);
    rest + a[n] * s
}

#[reverse_diff]
fn halved_each_step(a: &[f64], #[no_grad] s: f64, n: usize) -> f64 {
    if n == 0 {
        return a[0] * s;
    }
    let mut h = 1.0;
    h *= 0.5;
    let rest: f64 = halved_each_step(a, h, n - 1);
    rest + a[n] * s
}

struct Model;

#[reverse_diff]
impl Model {
    #[reverse_diff]
    fn at(&self, p: &[f64], #[no_grad] t: f64) -> f64 {
        p[0] * t
    }

    #[reverse_diff]
    fn both_forms(&self, p: &[f64]) -> f64 {
        self.at(p, p[1]) + Self::at(self, p, 2.0 * p[1])
    }
}

fn main() {}

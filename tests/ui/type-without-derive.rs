//! A parameter of the user's own type that does not derive `ad::Differentiable`: rustc raises
//! the error (the macro cannot see the type's definition), with the runtime's own message
//! saying to derive the trait or mark the parameter `#[no_grad]`.

use ad::reverse_diff;

#[derive(Clone, Copy)]
struct Point<T> {
    x: T,
    y: T,
}

#[reverse_diff]
fn norm(p: Point<f64>) -> f64 {
    (p.x * p.x + p.y * p.y).sqrt()
}

fn main() {}

// A primitive declared with first derivatives only cannot be differentiated twice: the
// Hessian of a function that calls it fails to build, naming the primitive attribute.
use ad::reverse_diff;

#[reverse_diff(primitive = cube_partials)]
fn cube(x: f64) -> f64 {
    x * x * x
}

fn cube_partials(x: f64) -> f64 {
    3.0 * x * x
}

#[reverse_diff]
fn model(x: f64) -> f64 {
    cube(x) + x
}

fn main() {
    let _ = model_hessian(2.0);
}

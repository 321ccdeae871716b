// Recursion: a tower of exponentials by repeated `powf`.
use ad::reverse_diff;

#[reverse_diff]
fn tower(x: f64, height: u32) -> f64 {
    if height == 0 {
        1.0
    } else {
        x.powf(tower(x, height - 1))
    }
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (_, dx) = tower_grad(1.3, 3);
    check_gradient(|p| tower(p[0], 3), &[1.3], &[dx]);
}

// Classical RK4 steps with a nested annotated right-hand side.
use ad::reverse_diff;

#[reverse_diff]
fn rhs(t: f64, y: f64, damping: f64) -> f64 {
    -damping * y * t + t.sin()
}

#[reverse_diff]
fn rk4(y0: f64, damping: f64, h: f64, steps: usize) -> f64 {
    let mut y = y0;
    let mut t = 0.0;
    for _ in 0..steps {
        let k1 = rhs(t, y, damping);
        let k2 = rhs(t + h / 2.0, y + h * k1 / 2.0, damping);
        let k3 = rhs(t + h / 2.0, y + h * k2 / 2.0, damping);
        let k4 = rhs(t + h, y + h * k3, damping);
        y += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
        t += h;
    }
    y
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (_, (dy, dd, dh)) = rk4_grad(1.0, 0.4, 0.1, 20);
    check_gradient(
        |p| rk4(p[0], p[1], p[2], 20),
        &[1.0, 0.4, 0.1],
        &[dy, dd, dh],
    );
}

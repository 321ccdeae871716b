//! Nested differentiation: a companion (`g_grad`, `g_jvp`) called inside a differentiated
//! function is differentiated too, in all four combinations of outer and inner mode, and each
//! level keeps its derivatives apart.

mod common;

use ad::reverse_diff;
use approx::assert_relative_eq;

#[reverse_diff]
fn sum(x: f64, y: f64) -> f64 {
    x + y
}

/// d/dx [x · d/dy (x + y)]: the inner derivative is 1 whatever x is, so the whole is 1 (a tool
/// that confuses the two levels' perturbations gets 2).
#[reverse_diff]
fn confusion(x: f64) -> f64 {
    let (_, (_, dy)) = sum_grad(x, 3.0);
    x * dy
}

/// The same through the inner forward mode.
#[reverse_diff]
fn confusion_forward(x: f64) -> f64 {
    let (_, dy) = sum_jvp(x, 3.0, 0.0, 1.0);
    x * dy
}

#[test]
fn perturbations_of_two_levels_stay_apart() {
    for x in [-2.0, 0.0, 0.5, 7.0] {
        // Outer reverse (the tape) and outer forward (lanes), inner reverse.
        assert_eq!(confusion_grad(x), (x, 1.0));
        assert_eq!(confusion_vjp(x, &1.0).1, 1.0);
        assert_eq!(confusion_jvp(x, 1.0), (x, 1.0));
        // Inner forward.
        assert_eq!(confusion_forward_grad(x), (x, 1.0));
        assert_eq!(confusion_forward_vjp(x, &1.0).1, 1.0);
        assert_eq!(confusion_forward_jvp(x, 1.0), (x, 1.0));
    }
}

#[reverse_diff]
fn cubic(x: f64, y: f64) -> f64 {
    x * x * x * y + (x * y).sin()
}

/// ∂cubic/∂x = 3x²y + y cos(xy), through the inner reverse mode.
#[reverse_diff]
fn d_cubic_dx(x: f64, y: f64) -> f64 {
    cubic_grad(x, y).1 .0
}

/// The same through the inner forward mode.
#[reverse_diff]
fn d_cubic_dx_forward(x: f64, y: f64) -> f64 {
    cubic_jvp(x, y, 1.0, 0.0).1
}

/// The second derivatives of `cubic` by hand: ∂²/∂x² = 6xy − y² sin(xy),
/// ∂²/∂x∂y = 3x² + cos(xy) − xy sin(xy).
fn cubic_second(x: f64, y: f64) -> (f64, f64) {
    (
        6.0 * x * y - y * y * (x * y).sin(),
        3.0 * x * x + (x * y).cos() - x * y * (x * y).sin(),
    )
}

#[test]
fn the_gradient_of_a_gradient_is_the_hessian_row() {
    for (x, y) in [(0.7, -1.3), (2.0, 0.25), (-1.5, 3.0)] {
        let (dxx, dxy) = cubic_second(x, y);
        let first = 3.0 * x * x * y + y * (x * y).cos();
        // rr: outer reverse (more than... the tape via vjp), inner reverse.
        let (value, (gx, gy)) = d_cubic_dx_vjp(x, y, &1.0);
        assert_relative_eq!(value, first, max_relative = 1e-14);
        assert_relative_eq!(gx, dxx, max_relative = 1e-13);
        assert_relative_eq!(gy, dxy, max_relative = 1e-13);
        // fr: outer forward (lanes), inner reverse.
        let (_, (gx, gy)) = d_cubic_dx_grad(x, y);
        assert_relative_eq!(gx, dxx, max_relative = 1e-13);
        assert_relative_eq!(gy, dxy, max_relative = 1e-13);
        // rf: outer reverse, inner forward.
        let (_, (gx, gy)) = d_cubic_dx_forward_vjp(x, y, &1.0);
        assert_relative_eq!(gx, dxx, max_relative = 1e-13);
        assert_relative_eq!(gy, dxy, max_relative = 1e-13);
        // ff: outer forward, inner forward.
        let (_, (gx, gy)) = d_cubic_dx_forward_grad(x, y);
        assert_relative_eq!(gx, dxx, max_relative = 1e-13);
        assert_relative_eq!(gy, dxy, max_relative = 1e-13);
        // And the same row from `_hessian` (reverse over forward, no nesting).
        let (_, _, rows) = cubic_hessian(x, y);
        assert_relative_eq!(rows[0].0, dxx, max_relative = 1e-13);
        assert_relative_eq!(rows[0].1, dxy, max_relative = 1e-13);
        // The outer jvp (forward over the inner reverse).
        let (_, along_x) = d_cubic_dx_jvp(x, y, 1.0, 0.0);
        assert_relative_eq!(along_x, dxx, max_relative = 1e-13);
    }
}

/// The potential energy of particles on springs to the origin, with a pairwise coupling: the
/// forces are its negative gradient.
#[reverse_diff]
fn potential(x: &[f64], stiffness: f64) -> f64 {
    let mut energy = 0.0;
    for i in 0..x.len() {
        energy += 0.5 * stiffness * x[i] * x[i];
        if i + 1 < x.len() {
            energy += 0.25 * (x[i + 1] - x[i]).powi(4);
        }
    }
    energy
}

/// Where the particles end after `steps` semi-implicit Euler steps under those forces, scored
/// by their squared distance to `target`: the gradient of a trajectory's loss through forces
/// that are themselves a gradient.
#[reverse_diff]
fn trajectory_loss(x0: &[f64], stiffness: f64, #[no_grad] target: &[f64], steps: usize) -> f64 {
    let dt = 0.05;
    let mut x = x0.to_vec();
    let mut v = vec![0.0; x.len()];
    for _ in 0..steps {
        let (_, (gradient, _)) = potential_grad(&x, stiffness);
        for i in 0..x.len() {
            v[i] -= dt * gradient[i];
            x[i] += dt * v[i];
        }
    }
    x.iter()
        .zip(target)
        .map(|(xi, ti)| (xi - ti) * (xi - ti))
        .sum()
}

#[test]
fn a_trajectory_through_forces_that_are_a_gradient() {
    let x0 = [0.3, -0.2, 0.5, 0.1];
    let target = [0.0, 0.1, -0.1, 0.2];
    let (stiffness, steps) = (1.7, 40);
    let (value, (dx0, dk)) = trajectory_loss_grad(&x0, stiffness, &target, steps);
    // The inner gradient is summed in another order on the nested tape than by the top-level
    // `potential_grad`, so the value may differ in the last bits.
    assert_relative_eq!(
        value,
        trajectory_loss(&x0, stiffness, &target, steps),
        max_relative = 1e-14
    );
    // Central differences, h = 1e-6: agreement to 1e-6 relative.
    let h = 1e-6;
    for i in 0..x0.len() {
        let (mut up, mut down) = (x0, x0);
        up[i] += h;
        down[i] -= h;
        let fd = (trajectory_loss(&up, stiffness, &target, steps)
            - trajectory_loss(&down, stiffness, &target, steps))
            / (2.0 * h);
        assert_relative_eq!(dx0[i], fd, max_relative = 1e-6, epsilon = 1e-9);
    }
    let fd = (trajectory_loss(&x0, stiffness + h, &target, steps)
        - trajectory_loss(&x0, stiffness - h, &target, steps))
        / (2.0 * h);
    assert_relative_eq!(dk, fd, max_relative = 1e-6);
}

/// Third order: the gradient of a function that takes the gradient of a gradient.
#[reverse_diff]
fn d2_cubic_dx2(x: f64, y: f64) -> f64 {
    d_cubic_dx_grad(x, y).1 .0
}

#[test]
fn three_levels() {
    let (x, y) = (0.4, 1.1);
    // ∂³cubic/∂x³ = 6y − y³ cos(xy); ∂³/∂x²∂y = 6x − 2y sin(xy) − x y² cos(xy).
    let (value, (gx, gy)) = d2_cubic_dx2_grad(x, y);
    assert_relative_eq!(value, cubic_second(x, y).0, max_relative = 1e-14);
    assert_relative_eq!(
        gx,
        6.0 * y - y.powi(3) * (x * y).cos(),
        max_relative = 1e-13
    );
    assert_relative_eq!(
        gy,
        6.0 * x - 2.0 * y * (x * y).sin() - x * y * y * (x * y).cos(),
        max_relative = 1e-13
    );
    let (_, (gx_tape, _)) = d2_cubic_dx2_vjp(x, y, &1.0);
    assert_relative_eq!(gx_tape, gx, max_relative = 1e-13);
}

#[reverse_diff]
fn polar(r: f64, t: f64) -> [f64; 2] {
    [r * t.cos(), r * t.sin()]
}

/// The product of the two entries of a vector–Jacobian product of `polar`, taken inside.
#[reverse_diff]
fn pulled_back(r: f64, t: f64) -> f64 {
    let (_, (dr, dt)) = polar_vjp(r, t, &[1.0, 2.0]);
    dr * dt
}

#[test]
fn a_vector_jacobian_product_inside() {
    let (r, t): (f64, f64) = (1.3, 0.4);
    // (dr, dt) = (cos t + 2 sin t, r (2 cos t − sin t)).
    let (a, b) = (t.cos() + 2.0 * t.sin(), 2.0 * t.cos() - t.sin());
    let expected_r = a * b;
    let expected_t = b * r * b + a * r * (-2.0 * t.sin() - t.cos());
    let (value, (gr, gt)) = pulled_back_grad(r, t);
    assert_relative_eq!(value, a * r * b, max_relative = 1e-14);
    assert_relative_eq!(gr, expected_r, max_relative = 1e-13);
    assert_relative_eq!(gt, expected_t, max_relative = 1e-13);
    let (_, (gr, gt)) = pulled_back_vjp(r, t, &1.0);
    assert_relative_eq!(gr, expected_r, max_relative = 1e-13);
    assert_relative_eq!(gt, expected_t, max_relative = 1e-13);
}

//! Closures and higher-order functions inside differentiated functions. Expected values are
//! analytic derivatives.

use ad::reverse_diff;
use approx::assert_relative_eq;

#[reverse_diff]
fn closure_capturing_locals(x: f64, y: f64) -> f64 {
    let k = x * y;
    let f = |t: f64| k * t + x;
    f(1.0) + f(2.0) + f(y)
}

#[reverse_diff]
fn adapters(w: &[f64]) -> f64 {
    let scale = w[0];
    let squares: Vec<f64> = w.iter().map(|v| v * v * scale).collect();
    let positive = squares.iter().filter(|v| **v > 0.5).count() as f64;
    let folded = squares.iter().fold(0.0, |acc, v| acc + v);
    let zipped: f64 = w.iter().zip(squares.iter()).map(|(a, b)| a * b).sum();
    let mut accumulator = 0.0;
    w.iter().for_each(|v| accumulator += v.sin());
    let running: Vec<f64> = w
        .iter()
        .scan(1.0, |state, v| {
            *state *= v;
            Some(*state)
        })
        .collect();
    folded + zipped + accumulator + running.iter().sum::<f64>() + positive
}

#[reverse_diff]
fn closure_returning_tuple(x: f64) -> f64 {
    let polar = |r: f64| (r * x.cos(), r * x.sin());
    let (a, b) = polar(2.0);
    a * b
}

#[reverse_diff]
fn integrate(f: impl Fn(f64) -> f64, a: f64, b: f64, n: usize) -> f64 {
    let h = (b - a) / n as f64;
    let mut total = 0.0;
    for i in 0..n {
        let t = a + (i as f64 + 0.5) * h;
        total += f(t);
    }
    total * h
}

#[reverse_diff]
fn apply_twice<F>(f: F, x: f64) -> f64
where
    F: Fn(f64) -> f64,
{
    f(f(x))
}

#[reverse_diff]
fn apply_dyn(f: &dyn Fn(f64) -> f64, x: f64) -> f64 {
    f(x) * 2.0
}

#[reverse_diff]
fn g(k: f64, a: f64, b: f64) -> f64 {
    integrate(|t| (k * t).sin(), a, b, 1000)
}

#[reverse_diff]
fn uses_generic_and_dyn(k: f64, x: f64) -> f64 {
    apply_twice(|t| k * t * t, x) + apply_dyn(&|t| k + t, x)
}

#[test]
fn closures_capture_differentiable_locals() {
    let (x, y) = (1.5, 0.5);
    let (value, (dx, dy)) = closure_capturing_locals_grad(x, y);
    // f(t) = x y t + x; value = x y (3 + y) + 3x.
    assert_relative_eq!(value, x * y * (3.0 + y) + 3.0 * x, max_relative = 1e-15);
    assert_relative_eq!(dx, y * (3.0 + y) + 3.0, max_relative = 1e-15);
    assert_relative_eq!(dy, x * (3.0 + y) + x * y, max_relative = 1e-15);
}

#[test]
fn iterator_adapters() {
    let w = [0.9, 1.2, -0.7];
    let (value, gradient) = adapters_grad(&w);
    assert_relative_eq!(value, adapters(&w), max_relative = 1e-15);
    // Analytic: with s = w0, q_i = w_i² s:
    // folded = Σ q_i, zipped = Σ w_i q_i = s Σ w_i³, acc = Σ sin w_i,
    // running = w0 + w0 w1 + w0 w1 w2 (the count of q_i > 0.5 is piecewise constant).
    let s = w[0];
    let sum_sq: f64 = w.iter().map(|v| v * v).sum();
    let sum_cube: f64 = w.iter().map(|v| v * v * v).sum();
    let mut expected = [0.0; 3];
    for i in 0..3 {
        expected[i] = 2.0 * w[i] * s + 3.0 * w[i] * w[i] * s + w[i].cos();
    }
    expected[0] += sum_sq + sum_cube;
    expected[0] += 1.0 + w[1] + w[1] * w[2];
    expected[1] += w[0] + w[0] * w[2];
    expected[2] += w[0] * w[1];
    for (got, want) in gradient.iter().zip(expected) {
        assert_relative_eq!(*got, want, max_relative = 1e-13);
    }
}

#[test]
fn closures_returning_tuples() {
    let x = 0.3;
    let (value, dx) = closure_returning_tuple_grad(x);
    // 4 cos x sin x = 2 sin 2x; derivative 4 cos 2x.
    assert_relative_eq!(value, 2.0 * (2.0 * x).sin(), max_relative = 1e-14);
    assert_relative_eq!(dx, 4.0 * (2.0 * x).cos(), max_relative = 1e-14);
}

#[test]
fn higher_order_integrator() {
    let (k, a, b) = (2.0, 0.0, 1.0);
    let (value, (dk, da, db)) = g_grad(k, a, b);
    // ∫_a^b sin(k t) dt = (cos ka − cos kb)/k; the midpoint rule with n = 1000 is within 1e-6.
    assert_relative_eq!(value, ((k * a).cos() - (k * b).cos()) / k, epsilon = 1e-6);
    // d/dk = ∫ t cos(k t) dt = [t sin(kt)/k + cos(kt)/k²]_a^b; d/da = −sin(ka); d/db = sin(kb).
    let antiderivative = |t: f64| t * (k * t).sin() / k + (k * t).cos() / (k * k);
    assert_relative_eq!(dk, antiderivative(b) - antiderivative(a), epsilon = 1e-6);
    assert_relative_eq!(da, -(k * a).sin(), epsilon = 1e-6);
    assert_relative_eq!(db, (k * b).sin(), epsilon = 1e-6);
    // The integrator still works on plain f64 closures.
    assert_relative_eq!(integrate(|t| t, 0.0, 1.0, 10), 0.5, epsilon = 1e-12);
}

#[test]
fn generic_and_dyn_function_parameters() {
    let (k, x) = (0.5, 1.5);
    let (value, (dk, dx)) = uses_generic_and_dyn_grad(k, x);
    // apply_twice: k (k x²)² = k³ x⁴; apply_dyn: 2(k + x).
    assert_relative_eq!(
        value,
        k.powi(3) * x.powi(4) + 2.0 * (k + x),
        max_relative = 1e-14
    );
    assert_relative_eq!(dk, 3.0 * k * k * x.powi(4) + 2.0, max_relative = 1e-14);
    assert_relative_eq!(dx, 4.0 * k.powi(3) * x.powi(3) + 2.0, max_relative = 1e-14);
}

/// A closure whose result is typed (`-> f64`, so its body is a block) and one with a block
/// body, over constant nodes: their `f64` parameters are converted inside their own blocks,
/// adding no braces (the function denies `unused_braces`).
#[deny(unused_braces)]
#[reverse_diff]
fn typed_closure_results(x: f64, #[no_grad] nodes: &[f64]) -> f64 {
    let f = |t: f64| -> f64 { t * x };
    let g = |t: f64| {
        let u = t * t;
        u * x.sin()
    };
    nodes.iter().map(|&t| f(t) + g(t)).sum::<f64>()
}

#[test]
fn closures_with_typed_results_take_constants() {
    let nodes = [0.1, 0.5, 0.9];
    let x = 0.7;
    let (value, derivative) = typed_closure_results_grad(x, &nodes);
    assert_eq!(value.to_bits(), typed_closure_results(x, &nodes).to_bits());
    // Σ t + t² cos x.
    let expected: f64 = nodes.iter().map(|t| t + t * t * x.cos()).sum();
    assert_relative_eq!(derivative, expected, max_relative = 1e-14);
}

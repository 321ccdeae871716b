//! Generic signatures: lifetime parameters, const generics, type parameters with bounds and
//! `where` clauses (other than the scalar, which `#[reverse_diff]` adds). The companion keeps
//! the function's generic parameters. Expected values are analytic derivatives.

use ad::reverse_diff;
use approx::assert_relative_eq;
use std::collections::HashMap;
use std::hash::Hash;

/// A lifetime parameter shared by two slices.
#[reverse_diff]
fn paired_products<'a>(xs: &'a [f64], ys: &'a [f64]) -> f64 {
    let pairs: Vec<(&'a f64, &'a f64)> = xs.iter().zip(ys).collect();
    pairs.iter().map(|(x, y)| **x * **y).sum::<f64>()
}

/// Constant data borrowed by a struct with a lifetime parameter.
struct Observations<'a> {
    xs: &'a [f64],
    ys: &'a [f64],
}

/// A lifetime on constant data and an elided one on the weights.
#[reverse_diff]
fn squared_error<'data>(w: &[f64], #[no_grad] data: &Observations<'data>) -> f64 {
    let mut total = 0.0;
    for (x, y) in data.xs.iter().zip(data.ys) {
        let residual = w[0] * x + w[1] - y;
        total += residual * residual;
    }
    total
}

/// A const generic: the gradient of `[f64; N]` is a `[f64; N]`.
#[reverse_diff]
fn norm<const N: usize>(x: [f64; N]) -> f64 {
    let mut total = 0.0;
    for value in x.iter() {
        total += value * value;
    }
    total.sqrt()
}

/// A const generic used in the body and on a reference to an array of arrays.
#[reverse_diff]
fn weighted_rows<const R: usize, const C: usize>(rows: &[[f64; C]; R]) -> f64 {
    let mut total = 0.0;
    for (i, row) in rows.iter().enumerate() {
        for value in row {
            total += value * (i + C) as f64;
        }
    }
    total / R as f64
}

/// A type parameter with bounds, for constant keys.
#[reverse_diff]
fn weight_by_key<K: Hash + Eq + Clone>(w: &[f64], keys: &[K]) -> f64 {
    let mut first_seen: HashMap<K, usize> = HashMap::new();
    let mut total = 0.0;
    for (i, key) in keys.iter().enumerate() {
        let first = *first_seen.entry(key.clone()).or_insert(i);
        total += w[first] * w[i];
    }
    total
}

/// Type parameters bounded in a `where` clause, and an `impl Trait` parameter with no `f64`.
#[reverse_diff]
fn select_and_sum<I, P>(w: &[f64], indices: I, keep: P) -> f64
where
    I: IntoIterator<Item = usize>,
    P: Fn(usize) -> bool,
{
    indices
        .into_iter()
        .filter(|i| keep(*i))
        .map(|i| w[i] * w[i])
        .sum::<f64>()
}

/// Every kind of generic parameter at once, and a lifetime bound in the `where` clause.
#[reverse_diff]
fn everything<'a, T, const N: usize>(x: [f64; N], labels: &'a [T]) -> f64
where
    T: AsRef<str> + 'a,
{
    let mut total = 0.0;
    for (value, label) in x.iter().zip(labels) {
        total += value * label.as_ref().len() as f64;
    }
    total
}

#[test]
fn lifetime_parameters() {
    let (xs, ys) = ([1.0, 2.0], [3.0, -4.0]);
    let (value, (dxs, dys)) = paired_products_grad(&xs, &ys);
    // d(x·y)/dx = y, d(x·y)/dy = x.
    assert_eq!(value, -5.0);
    assert_eq!((dxs, dys), (ys.to_vec(), xs.to_vec()));

    let data = Observations {
        xs: &[1.0, 2.0],
        ys: &[1.0, 4.0],
    };
    let w = [2.0, 1.0];
    let (value, dw) = squared_error_grad(&w, &data);
    // Residuals r = (2, 1); d/dw0 = 2 Σ r x = 8, d/dw1 = 2 Σ r = 6.
    assert_eq!(value, 5.0);
    assert_eq!(dw, vec![8.0, 6.0]);
}

#[test]
fn const_generics() {
    let (value, gradient): (f64, [f64; 3]) = norm_grad([2.0, 3.0, 6.0]);
    // d|x|/dx = x / |x|, |x| = 7.
    assert_eq!(value, 7.0);
    for (got, x) in gradient.iter().zip([2.0, 3.0, 6.0]) {
        assert_relative_eq!(*got, x / 7.0, max_relative = 1e-15);
    }
    let (value, gradient): (f64, [f64; 1]) = norm_grad([-4.0]);
    assert_eq!((value, gradient), (4.0, [-1.0]));

    let rows = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
    let (value, gradient): (f64, [[f64; 2]; 3]) = weighted_rows_grad(&rows);
    // Entry (i, j) has weight (i + 2) / 3.
    assert_relative_eq!(value, (2.0 * 3.0 + 3.0 * 7.0 + 4.0 * 11.0) / 3.0);
    for (i, row) in gradient.iter().enumerate() {
        for got in row {
            assert_relative_eq!(*got, (i + 2) as f64 / 3.0, max_relative = 1e-15);
        }
    }
}

#[test]
fn bounded_type_parameters() {
    let w = [1.0, 2.0, 3.0];
    let (value, dw) = weight_by_key_grad(&w, &["a", "b", "a"]);
    // w0 w0 + w1 w1 + w0 w2: d/dw = (2 w0 + w2, 2 w1, w0).
    assert_eq!(value, 1.0 + 4.0 + 3.0);
    assert_eq!(dw, vec![5.0, 4.0, 1.0]);

    let (value, dw) = select_and_sum_grad(&w, 0..3, |i| i != 1);
    // w0² + w2²: d/dw = (2 w0, 0, 2 w2).
    assert_eq!((value, dw), (10.0, vec![2.0, 0.0, 6.0]));

    let (value, dx) = everything_grad([1.0, 0.5], &["ab", "abcd"]);
    // Σ x_i len_i: d/dx_i = len_i.
    assert_eq!((value, dx), (4.0, [2.0, 4.0]));
}

/// A bound that mentions `f64` but is not a function describes constant data: it stays as
/// written, and the function keeps its companion.
#[reverse_diff]
fn scaled_by<T: Copy + Into<f64>>(x: f64, k: T) -> f64 {
    let factor = k.into();
    x * x * factor
}

#[test]
fn non_function_bounds_over_f64_are_constant_data() {
    // d(k x²)/dx = 2 k x.
    assert_eq!(scaled_by_grad(3.0, 2.0f32), (18.0, 12.0));
    assert_eq!(scaled_by(3.0, 2u8), 18.0);
}

/// A model the caller names, whose constants only the body uses.
trait Model {
    const SCALE: f64;
    const POWER: i32;
}

struct Cubic;

impl Model for Cubic {
    const SCALE: f64 = 0.5;
    const POWER: i32 = 3;
}

/// A type parameter no argument carries: the companions and the function name it at the call.
#[reverse_diff]
fn energy<M: Model, const N: usize>(x: [f64; N]) -> f64 {
    x.iter().map(|v| M::SCALE * v.powi(M::POWER)).sum()
}

#[test]
fn type_parameters_named_only_by_the_caller() {
    // d(½ Σ x³)/dxᵢ = 3/2 xᵢ².
    let x = [1.0, -2.0, 0.5];
    // The function is generic over the scalar first, then over what it declares.
    assert_eq!(energy::<f64, Cubic, 3>(x), 0.5 * (1.0 - 8.0 + 0.125));
    let (value, gradient) = energy_grad::<f64, Cubic, 3>(x);
    assert_eq!(value, energy::<f64, Cubic, 3>(x));
    assert_eq!(gradient, [1.5, 6.0, 0.375]);
    let (_, vjp) = energy_vjp::<f64, Cubic, 3>(x, &2.0);
    assert_eq!(vjp, [3.0, 12.0, 0.75]);
    let (_, tangent) = energy_jvp::<f64, Cubic, 3>(x, [1.0, 0.0, 2.0]);
    assert_eq!(tangent, 1.5 + 0.75);
    let (_, jacobian) = energy_jacobian::<Cubic, 3>(x);
    assert_eq!(jacobian, vec![[1.5, 6.0, 0.375]]);
    let (_, _, hessian) = energy_hessian::<Cubic, 3>(x);
    assert_eq!(
        hessian,
        vec![[3.0, 0.0, 0.0], [0.0, -6.0, 0.0], [0.0, 0.0, 1.5]]
    );
}

/// The same model in a fused callee: its record is built over the hidden unfused body, which
/// is named with the model too.
#[reverse_diff(fused)]
fn fused_energy<M: Model>(x: f64) -> f64 {
    M::SCALE * x.powi(M::POWER)
}

/// Over `f32`: the `f32` companions call their `f64` twins with the model named.
#[reverse_diff]
fn energy_f32<M: Model>(x: f32) -> f32 {
    M::SCALE as f32 * x.powi(M::POWER)
}

#[test]
fn type_parameters_named_only_by_the_caller_in_fused_and_f32_functions() {
    // d(½ x³)/dx = 3/2 x².
    assert_eq!(fused_energy_grad::<f64, Cubic>(2.0), (4.0, 6.0));
    assert_eq!(energy_f32_grad::<Cubic>(2.0), (4.0, 6.0));
    let (value, _, second) = energy_f32_hessian::<Cubic>(2.0);
    assert_eq!((value, second), (4.0, vec![6.0]));
}

/// A model named by the caller beside an `impl Fn` parameter (which gives `shaped` no
/// companions of its own: another differentiated function calls it).
#[reverse_diff]
fn shaped<M: Model>(x: f64, shape: impl Fn(f64) -> f64) -> f64 {
    M::SCALE * shape(x)
}

#[reverse_diff]
fn shaped_sine(x: f64) -> f64 {
    shaped::<_, Cubic>(x, |v| v.sin())
}

#[test]
fn type_parameters_named_only_by_the_caller_beside_impl_trait() {
    // d(½ sin x)/dx = ½ cos x.
    let (value, derivative) = shaped_sine_grad(1.0);
    assert_eq!(value, 0.5 * 1.0f64.sin());
    assert!((derivative - 0.5 * 1.0f64.cos()).abs() < 1e-15);
}

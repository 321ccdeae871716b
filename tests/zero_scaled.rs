//! Statements that add a product by data that may be a constant zero (`p[i] += weights[v] *
//! (t0 * x + t1 * y)`, with sparse weights): where the statement is left as written, the
//! product's derivative is formed only when the weight is not 0 (`ad-macro/src/fuse/scaled.rs`).
//! Checked against the same functions written as plain generic code (which the macro never
//! sees), against central differences, bit for bit against the function over `f64`, and by
//! counting the records; and statements of the same shape over other types still compile.

mod common;

use ad::{reverse_diff, Real, Var};
use common::{assert_gradient_matches, bits, records};

/// A vertex at rest, homogeneous: a pattern of this type binds names whose type the macro
/// cannot tell, so the skinning statement is left as written (it does not fuse).
type Rest = [f64; 4];

/// Skinned positions: each vertex moved by each of two transforms `t` (rows of four),
/// weighted; then one output, the sum of squared coordinates.
#[reverse_diff]
fn skinned(t: &[f64], #[no_grad] weights: &[f64], #[no_grad] rest: &[Rest]) -> f64 {
    let vertices = rest.len();
    let mut positions = vec![0.0; 3 * vertices];
    for bone in 0..2 {
        let w = &weights[bone * vertices..(bone + 1) * vertices];
        for (vertex, &[x, y, z, h]) in rest.iter().enumerate() {
            for row in 0..3 {
                let m = 12 * bone + 4 * row;
                positions[3 * vertex + row] +=
                    w[vertex] * (t[m] * x + t[m + 1] * y + t[m + 2] * z + t[m + 3] * h);
            }
        }
    }
    let mut total = 0.0;
    for p in positions {
        total += p * p;
    }
    total
}

/// [`skinned`] as plain generic code: every operation recorded or carried as written (the
/// scalar on the left of each product by data, which is the same product).
fn skinned_plain<S: Real>(t: &[S], weights: &[f64], rest: &[Rest]) -> S {
    let vertices = rest.len();
    let mut positions = vec![S::from_f64(0.0); 3 * vertices];
    for bone in 0..2 {
        let w = &weights[bone * vertices..(bone + 1) * vertices];
        for (vertex, &[x, y, z, h]) in rest.iter().enumerate() {
            for row in 0..3 {
                let m = 12 * bone + 4 * row;
                positions[3 * vertex + row] +=
                    (t[m] * x + t[m + 1] * y + t[m + 2] * z + t[m + 3] * h) * w[vertex];
            }
        }
    }
    let mut total = S::from_f64(0.0);
    for p in positions {
        total += p * p;
    }
    total
}

fn transforms() -> Vec<f64> {
    (0..24)
        .map(|i| 0.3 + 0.1 * (i as f64 * 0.7).sin())
        .collect()
}

fn rest(vertices: usize) -> Vec<Rest> {
    (0..vertices)
        .map(|v| {
            let v = v as f64;
            [0.5 + (v * 0.3).cos(), 0.2 * v - 1.0, (v * 0.11).sin(), 1.0]
        })
        .collect()
}

/// Weights of `vertices` vertices by two bones: each vertex follows one bone, or both.
fn sparse_weights(vertices: usize) -> Vec<f64> {
    let mut weights = vec![0.0; 2 * vertices];
    for v in 0..vertices {
        match v % 3 {
            0 => weights[v] = 1.0,
            1 => weights[vertices + v] = 1.0,
            _ => {
                weights[v] = 0.25;
                weights[vertices + v] = 0.75;
            }
        }
    }
    weights
}

#[test]
fn sparse_weights_give_the_gradient_of_the_function_as_written() {
    let (t, rest) = (transforms(), rest(9));
    let weights = sparse_weights(9);
    let (value, gradient) = skinned_grad(&t, &weights, &rest);
    assert_eq!(
        value.to_bits(),
        skinned_plain(&t, &weights, &rest).to_bits()
    );
    assert_eq!(
        value.to_bits(),
        skinned::<f64>(&t, &weights, &rest).to_bits()
    );
    let f = |t: &[f64]| skinned_plain(t, &weights, &rest);
    assert_gradient_matches(f, &t, &gradient, 1e-6);
    // Against the plain function on the tape, which scales each zero-weighted term by 0.
    let tape = ad::Tape::new();
    let vars: Vec<Var> = t.iter().map(|&x| tape.var(x)).collect();
    let out = skinned_plain(&vars, &weights, &rest);
    tape.backward(out);
    let plain: Vec<f64> = vars.iter().map(|&v| tape.adjoint(v)).collect();
    assert_eq!(bits(&gradient), bits(&plain));
}

#[test]
fn a_zero_weight_records_nothing_for_its_term() {
    let (t, rest) = (transforms(), rest(6));
    let zero = vec![0.0; 12];
    let dense = vec![0.5; 12];
    let sparse = sparse_weights(6);
    let count = |weights: &[f64]| records(&t, |vars| skinned(vars, weights, &rest));
    let plain = |weights: &[f64]| records(&t, |vars| skinned_plain(vars, weights, &rest));
    // With every weight 0 the positions stay constants: nothing is recorded.
    assert_eq!(count(&zero), 0);
    assert!(plain(&zero) > 0);
    // 4 of the 6 vertices follow one bone: 12 of the 36 statements have a zero weight, and
    // each records neither its 4 products, its 3 sums nor its scaling.
    eprintln!("{} {} {}", count(&sparse), count(&dense), plain(&dense));
    assert!(count(&sparse) + 12 * 8 <= count(&dense));
}

#[test]
fn forward_mode_and_second_order_agree_with_the_plain_function() {
    let (t, rest) = (transforms(), rest(7));
    let weights = sparse_weights(7);
    // One directional derivative, on `Dual<f64>`.
    let direction: Vec<f64> = (0..24).map(|i| ((i * 7) % 5) as f64 - 2.0).collect();
    let (value, derivative) = skinned_jvp(&t, &weights, &rest, &direction);
    assert_eq!(
        value.to_bits(),
        skinned::<f64>(&t, &weights, &rest).to_bits()
    );
    let (_, gradient) = skinned_grad(&t, &weights, &rest);
    let expected: f64 = gradient.iter().zip(&direction).map(|(g, d)| g * d).sum();
    assert!((derivative - expected).abs() <= 1e-12 * expected.abs().max(1.0));
    // The Hessian (the function is quadratic in `t`): against central differences of the
    // gradient.
    let (_, _, hessian) = skinned_hessian(&t, &weights, &rest);
    for (j, row) in hessian.iter().enumerate() {
        let column = |t: &[f64]| skinned_grad(t, &weights, &rest).1[j];
        assert_gradient_matches(column, &t, row, 1e-6);
    }
}

/// Data of a type the macro cannot tell (an alias), so that the statements reading it are
/// left as written rather than fused.
type Weight = f64;

/// A field, a dereferenced element, an element and a reference as the factor.
struct Spring<'a> {
    stiffness: f64,
    reference: &'a f64,
}

/// `one` is 1 in each statement's other factor, of a type the macro cannot tell, so that the
/// factor does not fuse into one record.
#[reverse_diff]
fn other_factors(
    x: &[f64],
    #[no_grad] mask: &[Weight],
    #[no_grad] spring: &Spring,
    #[no_grad] one: &[Weight],
) -> f64 {
    let mut out = vec![0.0; 4];
    for (i, m) in mask.iter().enumerate() {
        out[0] += mask[i] * (x[i] * x[i] - one[0]);
        out[1] -= *m * (x[i] - 0.5 * x[0] * one[0]);
        out[2] += spring.stiffness * (x[i] * x[0] * one[0]);
        out[3] += spring.reference * (x[i] / (one[0] + x[0] * x[0]));
    }
    out[0] * out[1] + out[2] * out[3] + out[0]
}

fn other_factors_plain<S: Real>(x: &[S], mask: &[Weight], spring: &Spring) -> S {
    let one = [1.0];
    let mut out = [S::from_f64(0.0); 4];
    for (i, m) in mask.iter().enumerate() {
        out[0] += (x[i] * x[i] - one[0]) * mask[i];
        out[1] -= (x[i] - x[0] * 0.5 * one[0]) * *m;
        out[2] += (x[i] * x[0] * one[0]) * spring.stiffness;
        out[3] += (x[i] / (x[0] * x[0] + one[0])) * *spring.reference;
    }
    out[0] * out[1] + out[2] * out[3] + out[0]
}

#[test]
fn fields_dereferences_elements_and_references_as_the_factor() {
    let x = [0.7, -0.4, 1.3, 0.2];
    let mask = [1.0, 0.0, -0.0, 2.0];
    for (stiffness, reference) in [(0.0, 0.0), (1.5, 0.0), (0.0, -2.0), (1.5, -2.0)] {
        let spring = Spring {
            stiffness,
            reference: &reference,
        };
        let (value, gradient) = other_factors_grad(&x, &mask, &spring, &[1.0]);
        let plain = other_factors_plain(&x, &mask, &spring);
        assert_eq!(value.to_bits(), plain.to_bits());
        let f = |x: &[f64]| other_factors_plain(x, &mask, &spring);
        assert_gradient_matches(f, &x, &gradient, 1e-6);
        let count = records(&x, |vars| other_factors(vars, &mask, &spring, &[1.0]));
        let all = records(&x, |vars| other_factors_plain(vars, &mask, &spring));
        assert!(count < all, "{count} records, {all} as written");
    }
    // Every factor 0: every `out[k]` stays a constant, and nothing is recorded.
    let spring = Spring {
        stiffness: 0.0,
        reference: &0.0,
    };
    let zeros = [0.0; 4];
    assert_eq!(
        records(&x, |vars| other_factors(vars, &zeros, &spring, &[1.0])),
        0
    );
}

/// A zero weight times an infinite or NaN value: the place takes the product's value (NaN),
/// and the derivative is 0, as the tape's conventions give for a zero factor.
#[reverse_diff]
fn scaled_infinity(x: f64, #[no_grad] w: &[Weight]) -> f64 {
    let mut out = [x];
    out[0] += w[0] * (x / (x - w[1]) + x);
    out[0]
}

fn scaled_infinity_plain<S: Real>(x: S, w: &[Weight]) -> S {
    let mut out = [x];
    out[0] += (x / (x - w[1]) + x) * w[0];
    out[0]
}

#[test]
fn a_zero_weight_keeps_the_value_and_the_conventions_of_the_product() {
    for w in [0.0, -0.0] {
        let (value, derivative) = scaled_infinity_grad(2.0, &[w, 2.0]);
        assert!(value.is_nan());
        assert_eq!(
            value.to_bits(),
            scaled_infinity_plain(2.0, &[w, 2.0]).to_bits()
        );
        assert_eq!(
            value.to_bits(),
            scaled_infinity::<f64>(2.0, &[w, 2.0]).to_bits()
        );
        let tape = ad::Tape::new();
        let x = tape.var(2.0);
        let out = scaled_infinity_plain(x, &[w, 2.0]);
        tape.backward(out);
        assert_eq!(derivative.to_bits(), tape.adjoint(x).to_bits());
    }
    // A signed zero: -0 times a positive value is -0, added to -0 gives -0, over every scalar.
    #[reverse_diff]
    fn signed(x: f64, #[no_grad] w: &[Weight]) -> f64 {
        let mut out = [-0.0, x];
        out[0] += w[0] * (x * x + w[1]);
        out[0]
    }
    let (value, derivative) = signed_grad(3.0, &[-0.0, 1.0]);
    assert_eq!(value.to_bits(), (-0.0f64).to_bits());
    assert_eq!(value.to_bits(), signed::<f64>(3.0, &[-0.0, 1.0]).to_bits());
    assert_eq!(derivative, 0.0);
}

/// A two-vector of the user's, which a scalar or a weight multiplies.
#[derive(Clone, Copy)]
struct Pair<T> {
    a: T,
    b: T,
}

impl<T: Real> std::ops::Mul<T> for Pair<T> {
    type Output = Pair<T>;
    fn mul(self, k: T) -> Pair<T> {
        Pair {
            a: self.a * k,
            b: self.b * k,
        }
    }
}

/// A gain of the user's, which multiplies a scalar.
#[derive(Clone, Copy)]
struct Gain(f64);

impl<T: Real> std::ops::Mul<T> for Gain {
    type Output = T;
    fn mul(self, x: T) -> T {
        x * self.0
    }
}

/// Statements of the same shape whose factor or leaves are not reals, and one inside a
/// closure whose parameter has no type yet: each runs as written.
#[reverse_diff]
fn other_types(x: f64, y: f64, #[no_grad] gains: &[Gain], #[no_grad] refs: &[&f64]) -> f64 {
    let mut out = [0.0; 3];
    out[0] += gains[0] * (x * y + gains[0].0);
    out[1] += refs[0] * (x - y * *refs[1]);
    let scale = |u, v| {
        let mut s = [0.0];
        s[0] += refs[1] * (u * v + x);
        s[0]
    };
    out[2] += scale(x, y);
    let pair = Pair { a: x, b: y } * (x + y);
    out[0] * out[1] + out[2] + pair.a * pair.b
}

#[test]
fn factors_and_leaves_of_other_types_run_as_written() {
    let (x, y) = (0.8, -1.7);
    let gains = [Gain(0.0)];
    let (one, zero) = (1.0, 0.0);
    for refs in [[&one, &zero], [&zero, &one]] {
        let (value, (dx, dy)) = other_types_grad(x, y, &gains, &refs);
        assert_eq!(
            value.to_bits(),
            other_types::<f64>(x, y, &gains, &refs).to_bits()
        );
        let f = |p: &[f64]| other_types::<f64>(p[0], p[1], &gains, &refs);
        assert_gradient_matches(f, &[x, y], &[dx, dy], 1e-6);
    }
}

/// A user's trait with methods named as `Read`'s might be, for every type, in scope.
#[allow(dead_code)]
trait Describe {
    fn value(&self) -> f64 {
        7.0
    }
    fn zero(&self) -> bool {
        false
    }
}

impl<T> Describe for T {}

/// A packed struct, whose fields may not be borrowed.
#[repr(C, packed)]
struct Packed {
    a: f64,
}

/// Statements of the shape whose leaves a borrow cannot read or whose types rustc knows only
/// later: a packed field, an element of a `Vec` filled after the statement, an item of a loop
/// over one (`Vec<_>`); and the user's trait above in scope. Each compiles and runs as
/// written.
#[reverse_diff]
fn leaves_read_as_written(x: &[f64], #[no_grad] w: &[Weight], #[no_grad] pk: &Packed) -> f64 {
    let mut out = [0.0; 3];
    let mut prev = Vec::new();
    let mut seen: Vec<_> = Vec::new();
    for i in 0..x.len() {
        out[0] += w[i] * (x[i] * pk.a + x[0]);
        if i > 0 {
            out[1] += w[i] * (x[i] * prev[i - 1]);
        }
        prev.push(&w[i]);
        for p in seen.iter() {
            out[2] += w[i] * (x[i] * *p);
        }
        seen.push(&w[i]);
    }
    out[0] * out[1] + out[0] + out[2]
}

#[test]
fn leaves_of_packed_fields_and_of_later_types_run_as_written() {
    let x = [0.4, -1.1, 0.9];
    let pk = Packed { a: 1.5 };
    for w in [[0.0, 2.0, 0.0], [1.0, 0.0, -0.5]] {
        let (value, gradient) = leaves_read_as_written_grad(&x, &w, &pk);
        assert_eq!(
            value.to_bits(),
            leaves_read_as_written::<f64>(&x, &w, &pk).to_bits()
        );
        let f = |x: &[f64]| leaves_read_as_written::<f64>(x, &w, &pk);
        assert_gradient_matches(f, &x, &gradient, 1e-6);
    }
}

//! Forward mode: `ad::Dual` and the companion `f_jvp`, checked against directional finite
//! differences and against the gradient.

mod common;

use ad::{reverse_diff, Dual, Real};
use approx::assert_relative_eq;
use common::{central_derivative, STEP};

/// Every kind of operation once, so the forward rules meet the reverse ones.
#[reverse_diff]
fn everything(x: f64, y: f64) -> f64 {
    let a = x.sin() * y.cos() + x.exp() / (1.0 + y * y) - (x - y).tanh();
    let b = x.hypot(y) + y.atan2(x) + x.powf(y) + x.powi(3) - x.ln() * y.sqrt();
    let c = x.max(y) - x.min(0.5) + (x * y).abs() + x.mul_add(y, 2.0) + (x % 0.7);
    let d = x.asinh() + (x / 4.0).acos() + y.cbrt() + x.log(y + 1.0) + (x * 0.3).atanh();
    let (s, co) = y.sin_cos();
    a + b + c + d + s * co + x.recip() + [x, y, 1.0].iter().product::<f64>()
}

/// A vector result over a slice.
#[reverse_diff]
fn cumulative_products(xs: &[f64]) -> Vec<f64> {
    let mut running = 1.0;
    xs.iter()
        .map(|x| {
            running *= x;
            running
        })
        .collect()
}

#[test]
fn dual_numbers_apply_the_chain_rule() {
    // d/dx (x³ + 2x) at 2 = 3·4 + 2 = 14.
    let x = Dual::new(2.0, 1.0);
    let y = x * x * x + 2.0 * x;
    assert_eq!(y.value, 12.0);
    assert_eq!(y.tangent, 14.0);
    // A constant has tangent 0.
    assert_eq!(Dual::<f64>::from_f64(3.0).tangent, 0.0);
}

#[test]
fn jvp_of_every_operation_matches_the_gradient_and_finite_differences() {
    // Hidden from the optimiser: in a release build it may evaluate a call over constants at
    // compile time, its `atan2` or `powf` then rounding otherwise than the library's at run
    // time, and the two values compared below would differ in their last bit.
    let (x, y) = std::hint::black_box((1.3, 0.8));
    let (value, (dx, dy)) = everything_grad(x, y);
    for (u, v) in [(1.0, 0.0), (0.0, 1.0), (0.6, -0.8)] {
        let (jvp_value, tangent) = everything_jvp(x, y, u, v);
        assert_eq!(jvp_value, value);
        assert_relative_eq!(tangent, u * dx + v * dy, epsilon = 1e-12);
        let along = |t: f64| everything(x + t * u, y + t * v);
        assert_relative_eq!(
            tangent,
            central_derivative(along, 0.0, STEP),
            epsilon = 1e-7
        );
    }
}

#[test]
fn jvp_of_a_vector_result() {
    let xs = [2.0, 3.0, 0.5];
    let tangent = [1.0, -1.0, 4.0];
    let (value, pushed) = cumulative_products_jvp(&xs, &tangent);
    assert_eq!(value, vec![2.0, 6.0, 3.0]);
    // Product rule by hand: (1, 1·3 − 2·1, (3 − 2)·0.5 + 6·4) = (1, 1, 24.5).
    assert_eq!(pushed, vec![1.0, 1.0, 24.5]);
}

#[test]
fn forward_mode_at_non_differentiable_points_follows_reverse_mode() {
    // `abs` at 0 has derivative 0 (README conventions), in both modes.
    #[reverse_diff]
    fn absolute(x: f64) -> f64 {
        x.abs()
    }
    assert_eq!(absolute_jvp(0.0, 1.0).1, absolute_grad(0.0).1);
    // A zero tangent through an infinite partial (√ at 0) contributes 0, as in the sweep.
    #[reverse_diff]
    fn root_plus(x: f64, y: f64) -> f64 {
        x.sqrt() + y
    }
    assert_eq!(root_plus_jvp(0.0, 1.0, 0.0, 1.0).1, 1.0);
}

#[test]
#[should_panic(expected = "the tangent or direction has 2 scalars but the parameter has 3")]
fn tangent_of_the_wrong_length_is_reported() {
    let _ = cumulative_products_jvp(&[1.0, 2.0, 3.0], &[1.0, 2.0]);
}

/// Eight scalars counted from the types: a tuple holding an array, a nested array by reference,
/// and an `f64`. `f_grad` runs it in forward mode.
#[reverse_diff]
fn eight_scalars(a: (f64, [f64; 2]), b: &[[f64; 2]; 2], c: f64) -> f64 {
    let (s, pair) = a;
    let mut total = s * c;
    for (i, row) in b.iter().enumerate() {
        for (j, x) in row.iter().enumerate() {
            total += (x * pair[j]).sin() + (i + j) as f64 * x.exp();
        }
    }
    total * total.tanh()
}

/// Nine scalars: one more than forward mode takes, so `f_grad` records on the tape.
#[reverse_diff]
fn nine_scalars(x: [f64; 9]) -> f64 {
    x.iter().map(|xi| xi.sin() * xi).sum::<f64>() * x[0]
}

/// What `eight_scalars_grad` returns: the value and the gradient in the parameters' shapes.
type EightGrad = (f64, ((f64, [f64; 2]), [[f64; 2]; 2], f64));

/// The eight scalars of [`eight_scalars`] in layout order.
fn eight_from(x: &[f64]) -> f64 {
    eight_scalars((x[0], [x[1], x[2]]), &[[x[3], x[4]], [x[5], x[6]]], x[7])
}

#[test]
fn grad_of_at_most_eight_scalars_runs_in_forward_mode() {
    let x = [0.3, -1.2, 0.8, 0.5, 1.1, -0.4, 0.9, 1.7];
    let gradient_of = |(value, ((ds, dpair), db, dc)): EightGrad| {
        (
            value,
            vec![
                ds, dpair[0], dpair[1], db[0][0], db[0][1], db[1][0], db[1][1], dc,
            ],
        )
    };
    let run = || {
        gradient_of(eight_scalars_grad(
            (x[0], [x[1], x[2]]),
            &[[x[3], x[4]], [x[5], x[6]]],
            x[7],
        ))
    };
    let tape_run = || {
        gradient_of(eight_scalars_vjp(
            (x[0], [x[1], x[2]]),
            &[[x[3], x[4]], [x[5], x[6]]],
            x[7],
            &1.0,
        ))
    };

    // A tape of 5 nodes holds neither run's record: `_vjp` (the tape) overflows it, `_grad`
    // (forward mode, no tape) does not.
    let limit = common::NodeLimit::lower_to(5);
    assert!(std::panic::catch_unwind(tape_run).is_err());
    let (value, gradient) = run();
    drop(limit);

    assert_eq!(value, eight_from(&x));
    common::assert_gradient_matches(eight_from, &x, &gradient, 1e-7);
    let (tape_value, tape_gradient) = tape_run();
    assert_eq!(tape_value, value);
    for (forward, reverse) in gradient.iter().zip(&tape_gradient) {
        assert_relative_eq!(forward, reverse, max_relative = 1e-13);
    }
}

#[test]
fn grad_of_nine_scalars_runs_on_the_tape() {
    let x = [0.3, -1.2, 0.8, 0.5, 1.1, -0.4, 0.9, 1.7, 0.2];
    let limit = common::NodeLimit::lower_to(5);
    assert!(std::panic::catch_unwind(|| nine_scalars_grad(x)).is_err());
    drop(limit);
    let (value, gradient) = nine_scalars_grad(x);
    let f = |x: &[f64]| nine_scalars(<[f64; 9]>::try_from(x).unwrap());
    assert_eq!(value, f(&x));
    common::assert_gradient_matches(f, &x, &gradient, 1e-7);
}

#[test]
fn grad_in_forward_mode_matches_the_tape_on_every_operation() {
    for (x, y) in [(0.7, 1.3), (1.9, 0.4), (2.5, 2.5), (0.2, 3.1)] {
        let (value, (dx, dy)) = everything_grad(x, y);
        let (tape_value, (tape_dx, tape_dy)) = everything_vjp(x, y, &1.0);
        assert_eq!(value, tape_value);
        assert_relative_eq!(dx, tape_dx, max_relative = 1e-13);
        assert_relative_eq!(dy, tape_dy, max_relative = 1e-13);
    }
}

/// `(x - x).cbrt()` inside two expressions: one where forward mode gains by the record (its
/// tangent is `x`'s times the record's partial, NaN as on the tape: `∞·1 + ∞·(−1)`), one
/// whose leaves outnumber the tangent operations a record would save (a sum: 5 as written
/// against 5 for the record), which forward mode evaluates as written (the tangent of `x - x`
/// is exactly 0 and stops the infinite partial: 0).
#[reverse_diff]
#[allow(clippy::eq_op)] // the cancellation is the point
fn root_of_zero_in(x: f64, y: f64, z: f64) -> (f64, f64) {
    let taken = y * y * (x - x).cbrt() + y.exp();
    let as_written = y + z + (x - x).cbrt();
    (taken, as_written)
}

#[test]
fn forward_mode_takes_a_record_where_it_saves_tangent_operations() {
    let (x, y, z) = (0.5, 1.5, -0.25);
    let tangents = [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)];
    let forward: Vec<(f64, f64)> = tangents
        .iter()
        .map(|&(dx, dy, dz)| root_of_zero_in_jvp(x, y, z, dx, dy, dz).1)
        .collect();
    let (_, taken) = root_of_zero_in_vjp(x, y, z, &(1.0, 0.0));
    let (_, as_written) = root_of_zero_in_vjp(x, y, z, &(0.0, 1.0));
    // The record: NaN along x in both modes; along y and z, the derivative.
    assert!(forward[0].0.is_nan() && taken.0.is_nan());
    assert_relative_eq!(forward[1].0, y.exp(), max_relative = 1e-15);
    assert_relative_eq!(taken.1, y.exp(), max_relative = 1e-15);
    assert_eq!((forward[2].0, taken.2), (0.0, 0.0));
    // As written: forward mode gets 0 along x, the tape NaN; along y and z both get 1.
    assert_eq!(forward[0].1, 0.0);
    assert!(as_written.0.is_nan());
    assert_eq!((forward[1].1, forward[2].1), (1.0, 1.0));
    assert_eq!((as_written.1, as_written.2), (1.0, 1.0));
}

/// The record of a loop sum's term, in forward mode too: `(x - x).cbrt()` inside the term
/// gives NaN along `x` in both modes, as in [`root_of_zero_in`].
#[reverse_diff]
// `x - x`: the cancellation is the point; `for i in 0..3`: the loop form recorded whole.
#[allow(clippy::eq_op, clippy::needless_range_loop)]
fn root_of_zero_summed(x: f64, v: [f64; 3]) -> f64 {
    let mut total = 0.0;
    for i in 0..3 {
        total += v[i] * v[i] * (x - x).cbrt() + v[i].exp();
    }
    total
}

#[test]
fn forward_mode_takes_the_records_of_a_loop_sum() {
    let v = [0.5, -1.0, 2.0];
    let (_, along_x) = root_of_zero_summed_jvp(1.5, v, 1.0, [0.0; 3]);
    let (_, along_v) = root_of_zero_summed_jvp(1.5, v, 0.0, [1.0, 0.0, 0.0]);
    let (_, (tape_x, tape_v)) = root_of_zero_summed_vjp(1.5, v, &1.0);
    assert!(along_x.is_nan() && tape_x.is_nan());
    assert_relative_eq!(along_v, 0.5f64.exp(), max_relative = 1e-15);
    assert_relative_eq!(tape_v[0], 0.5f64.exp(), max_relative = 1e-15);
}

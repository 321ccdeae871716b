//! Adjoints written out by the macro (`ad-macro/src/companions/adjoint.rs`): bodies of loops
//! over ranges writing local arrays and `f64` variables get `f_grad` and `f_vjp` that run the
//! body over `f64` with a stack of overwritten values, then the statements' adjoints in
//! reverse. Each function here is checked three ways: the adjoint was written out (a counter
//! the runtime keeps), its derivative equals the tape's (`set_generated_adjoints(false)`) to
//! rounding, and central differences (step 1e-6, relative tolerance 1e-6).
// Index loops are the shape the macro writes adjoints of.
#![allow(clippy::needless_range_loop)]

use ad::__private::{adjoints_written_out, set_generated_adjoints, set_wide_vectors};
use ad::reverse_diff;
use approx::assert_relative_eq;

/// The derivative both ways, asserting that the first call ran an adjoint written out and the
/// second the tape. The adjoint written out runs in both its copies, the one compiled for AVX2
/// where the CPU has it and the other (`set_wide_vectors`), which must agree bit for bit.
fn both<T: std::fmt::Debug>(mut call: impl FnMut() -> T) -> (T, T) {
    let before = adjoints_written_out();
    let written = call();
    assert_eq!(
        adjoints_written_out(),
        before + 1,
        "no adjoint written out ran"
    );
    set_wide_vectors(false);
    let narrow = call();
    set_wide_vectors(true);
    // `Debug` prints each `f64` exactly (NaN as NaN), so equal text is equal bits.
    assert_eq!(format!("{written:?}"), format!("{narrow:?}"));
    set_generated_adjoints(false);
    let taped = call();
    set_generated_adjoints(true);
    assert_eq!(
        adjoints_written_out(),
        before + 2,
        "the tape's companion ran one"
    );
    (written, taped)
}

/// Central differences of `f` at `x`.
fn central(f: impl Fn(&[f64]) -> f64, x: &[f64]) -> Vec<f64> {
    (0..x.len())
        .map(|i| {
            let h = 1e-6 * x[i].abs().max(1.0);
            let (mut up, mut down) = (x.to_vec(), x.to_vec());
            up[i] += h;
            down[i] -= h;
            (f(&up) - f(&down)) / (2.0 * h)
        })
        .collect()
}

fn assert_close(a: &[f64], b: &[f64], tolerance: f64) {
    assert_eq!(a.len(), b.len());
    for (a, b) in a.iter().zip(b) {
        assert_relative_eq!(a, b, max_relative = tolerance, epsilon = 1e-9);
    }
}

/// `grad` at `x` written out against the tape (values bit for bit, gradients to `tolerance`)
/// and against central differences of `f`.
fn agrees(
    f: impl Fn(&[f64]) -> f64,
    grad: impl Fn(&[f64]) -> (f64, Vec<f64>),
    x: &[f64],
    tolerance: f64,
) {
    let ((value, written), (taped_value, taped)) = both(|| grad(x));
    assert_eq!(value.to_bits(), f(x).to_bits());
    assert_eq!(value.to_bits(), taped_value.to_bits());
    assert_close(&written, &taped, tolerance);
    assert_close(&written, &central(&f, x), 1e-6);
}

/// A recurrence reading the array it writes (`y[i - 1]`), an overwrite each step, `+=`, `-=`
/// and a real `let` after the loops.
#[reverse_diff]
fn recurrence(x: &[f64], steps: usize) -> f64 {
    let n = x.len();
    let mut y = vec![1.0; n];
    for _ in 0..steps {
        for i in 1..n {
            y[i] = y[i - 1] * x[i] + y[i].sin();
        }
        y[0] -= 0.1 * x[0] * y[n - 1];
    }
    let last = y[n - 1] * y[0];
    let mut total = 0.0;
    for i in 0..n {
        total += y[i] * y[i] / (1.0 + x[i] * x[i]);
    }
    total + last.exp()
}

#[test]
fn a_recurrence_with_overwrites() {
    let x = [0.3, -0.7, 1.1, 0.4, -0.2, 0.9];
    let ((value, written), (taped_value, taped)) = both(|| recurrence_grad(&x, 4));
    assert_eq!(value, taped_value);
    assert_eq!(value.to_bits(), recurrence(&x, 4).to_bits());
    assert_close(&written, &taped, 1e-12);
    assert_close(&written, &central(|x| recurrence(x, 4), &x), 1e-6);
}

/// Stages of a step read as in gradbench's ode: element loops over other arrays (each pushed
/// and restored as one run), a first element set apart, and a vector result.
#[reverse_diff]
fn stages(x: &[f64], s: usize) -> Vec<f64> {
    let n = x.len();
    let mut k1 = vec![0.0; n];
    let mut k2 = vec![0.0; n];
    let mut y = vec![0.5; n];
    let h = 1.0 / s as f64;
    for _ in 0..s {
        k2[0] = x[0] * x[0];
        k1[0] = x[0];
        for i in 1..n {
            k1[i] = x[i] * y[i - 1];
        }
        for i in 1..n {
            k2[i] = x[i] * (y[i - 1] - h * k1[i - 1] / 2.0);
        }
        for i in 0..n {
            y[i] -= h * (k1[i] - k2[i]) / 2.0;
        }
    }
    y
}

/// `stages_vjp(x, s, cotangent)` written out against the tape and against central differences
/// of `stages(x, s) · cotangent`.
fn check_stages(x: &[f64], s: usize, cotangent: &[f64]) {
    let cotangent = cotangent.to_vec();
    let ((value, written), (taped_value, taped)) = both(|| stages_vjp(x, s, &cotangent));
    assert_eq!(value, taped_value);
    assert_eq!(value, stages(x, s));
    assert_close(&written, &taped, 1e-12);
    let dot = |x: &[f64]| -> f64 {
        stages(x, s)
            .iter()
            .zip(&cotangent)
            .map(|(y, c)| y * c)
            .sum()
    };
    assert_close(&written, &central(dot, x), 1e-6);
}

#[test]
fn stages_of_a_step_with_a_vector_result() {
    check_stages(&[0.8, 1.2, -0.5, 0.7, 1.4], 6, &[0.3, -1.0, 0.5, 2.0, 1.0]);
}

/// A cotangent 0 at most entries, as gradbench's ode seeds one: the element loops' adjoints
/// visit only the elements whose adjoint is not 0 (`ad::__private::last_nonzero`), across runs
/// of zeros longer and shorter than the eight it skips at once, and at both ends.
#[test]
fn element_loops_skip_zero_adjoints() {
    let x: Vec<f64> = (0..37).map(|i| 0.6 + 0.05 * (i % 9) as f64).collect();
    for holes in [&[36][..], &[0, 9, 10, 27], &[1, 2, 3, 4, 5, 6, 7, 8, 30]] {
        let mut cotangent = vec![0.0; x.len()];
        for &at in holes {
            cotangent[at] = 1.0 + at as f64 / 10.0;
        }
        check_stages(&x, 2, &cotangent);
    }
}

/// Reals read only by right-hand sides whose partials the forward pass keeps (`tanh`, `exp`):
/// no adjoint reads their values, so their assignments keep none, as the MLP's `pre`; one is
/// set from itself (`squashed = squashed.exp() * 0.5`).
#[reverse_diff]
fn squashed(x: &[f64], w: f64) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    let mut squashed = 0.3;
    for i in 1..n {
        let mut pre = w * x[i - 1];
        pre += x[i];
        total += x[i] * pre.tanh();
        squashed = squashed.exp() * 0.5 + x[i];
    }
    total + squashed
}

#[test]
fn values_only_costly_partials_read_keep_nothing() {
    let x = [0.4, -0.3, 0.9, 0.2, -0.8];
    let ((value, (gx, gw)), (taped_value, (tx, tw))) = both(|| squashed_grad(&x, 0.7));
    assert_eq!(value, taped_value);
    assert_eq!(value.to_bits(), squashed(&x, 0.7).to_bits());
    assert_close(&gx, &tx, 1e-12);
    assert_relative_eq!(gw, tw, max_relative = 1e-12);
    let of_x = |x: &[f64]| squashed(x, 0.7);
    assert_close(&gx, &central(of_x, &x), 1e-6);
    let of_w = |w: &[f64]| squashed(&x, w[0]);
    assert_close(&[gw], &central(of_w, &[0.7]), 1e-6);
}

/// Records that keep the values of their calls rather than their partials, for each function
/// whose partial reads its value alone (`w[2] * pre.tanh()` keeps `tanh`'s value, not two
/// partials), one with two such calls, and one of an element of a local array overwritten
/// after; beside records that keep their partials because the adjoint would read a local: a
/// call of an expression of locals (`(a * pre).tanh()`), a local read besides the call
/// (`pre.tanh() * pre`), a local weight (`a * pre.exp()`). The weights are `p[..10]`, the
/// data `p[10..]`.
#[reverse_diff]
fn kept_calls(p: &[f64], n: usize) -> f64 {
    let mut total = 0.0;
    let mut pre = 0.0;
    let mut a = 0.5;
    let mut y = vec![0.0; n];
    for i in 0..n {
        pre = p[10 + i] * p[0] + p[1];
        total += p[2] * pre.tanh();
        total += p[3] * pre.exp() - p[4] * pre.exp2();
        total += p[5] * pre.exp_m1() + p[6] * pre.sqrt();
        total += p[7] * pre.cbrt() * p[8] + pre.tan();
        y[i] = pre * pre;
        total += p[9] * y[i].tanh();
        y[i] = 0.0;
        total += p[2] * (a * pre).tanh() + pre.tanh() * pre + a * pre.exp();
        a = a * 0.9 + p[0] * p[10 + i];
    }
    total + a + pre
}

#[test]
fn records_keep_the_values_of_their_calls_where_they_can() {
    let mut p = vec![0.8, 0.3, -0.7, 0.4, 0.6, -0.5, 0.9, 0.35, -1.1, 0.45];
    p.extend([0.2, 0.7, -0.1, 0.5, 0.05]);
    let n = p.len() - 10;
    agrees(|p| kept_calls(p, n), |p| kept_calls_grad(p, n), &p, 1e-12);
}

/// Two differentiable parameters, one a scalar, constant data, nested loops with an integer
/// `let`, and a real `let` at the top.
#[reverse_diff]
fn weighted(a: f64, w: &[f64], #[no_grad] data: &[f64], rows: usize) -> f64 {
    let cols = w.len();
    let scale = a * a + 1.0;
    let mut out = vec![0.0; rows];
    for r in 0..rows {
        for c in 0..cols {
            let at = r * cols + c;
            out[r] += w[c] * data[at] * scale;
        }
    }
    let mut total = 0.0;
    for r in 0..rows {
        total += (out[r] - 1.0).powi(2) + out[r].tanh();
    }
    total / scale
}

#[test]
fn two_parameters_and_nested_loops() {
    let w = [0.5, -1.5, 0.25];
    let data: Vec<f64> = (0..12).map(|i| (f64::from(i) * 0.37).sin()).collect();
    let ((value, (da, dw)), (taped_value, (ta, tw))) = both(|| weighted_grad(0.7, &w, &data, 4));
    assert_eq!(value, taped_value);
    assert_relative_eq!(da, ta, max_relative = 1e-12);
    assert_close(&dw, &tw, 1e-12);
    let all = |p: &[f64]| weighted(p[0], &p[1..], &data, 4);
    let expected = central(all, &[0.7, 0.5, -1.5, 0.25]);
    assert_close(&[&[da][..], &dw].concat(), &expected, 1e-6);
}

/// A sum read while it is still being added to (`running` keeps each value it overwrites),
/// beside sums read only once final (`total`, `out`: nothing kept).
#[reverse_diff]
fn running(x: &[f64], #[no_grad] scale: f64) -> f64 {
    let n = x.len();
    let mut running = 0.0;
    let mut out = vec![0.0; n];
    for i in 0..n {
        running += x[i] * x[i];
        out[i] = (running * scale).sin();
    }
    let mut total = 0.0;
    for i in 0..n {
        total -= out[i] * x[i];
    }
    total * running
}

#[test]
fn sums_read_before_they_are_final() {
    let x = [0.4, -1.2, 0.9, 0.3, 1.7];
    let ((value, written), (taped_value, taped)) = both(|| running_grad(&x, 0.6));
    assert_eq!(value, taped_value);
    assert_close(&written, &taped, 1e-12);
    assert_close(&written, &central(|x| running(x, 0.6), &x), 1e-6);
}

/// A partial that is infinite where the element's adjoint is 0: the tape passes nothing back
/// from a node of adjoint 0, and neither does the adjoint written out.
#[reverse_diff]
fn unused_root(x: &[f64]) -> f64 {
    let n = x.len();
    let mut roots = vec![0.0; n];
    for i in 0..n {
        roots[i] = x[i].sqrt();
    }
    roots[1] * 2.0
}

#[test]
fn an_infinite_partial_of_an_unused_element_stays_out() {
    let x = [0.0, 4.0, 0.0];
    let ((_, written), (_, taped)) = both(|| unused_root_grad(&x));
    assert_eq!(written, vec![0.0, 0.5, 0.0]);
    assert_eq!(taped, written);
}

#[test]
fn a_wrong_cotangent_gets_the_tapes_message() {
    let result = std::panic::catch_unwind(|| stages_vjp(&[1.0, 2.0], 2, &vec![1.0]));
    let message = *result.unwrap_err().downcast::<String>().unwrap();
    assert!(
        message.contains("the cotangent has 1 scalars but the result has 2"),
        "{message}"
    );
}

#[test]
fn an_index_out_of_bounds_panics_as_the_function_does() {
    // `steps` = 0 and an empty `x`: `y[n - 1]` underflows `n - 1` in the function itself.
    let grad = std::panic::catch_unwind(|| recurrence_grad(&[] as &[f64], 1));
    let plain = std::panic::catch_unwind(|| recurrence(&[] as &[f64], 1));
    assert!(grad.is_err() && plain.is_err());
}

/// A `let mut` counter (`index += 1`), an iterator and a call are outside the shapes written
/// out: these get the tape's companions, as before.
#[reverse_diff]
fn outside(x: &[f64]) -> f64 {
    let mut total = 0.0;
    let mut index = 0;
    for v in x.iter() {
        total += v * x[index];
        index += 1;
    }
    total
}

#[test]
fn other_bodies_run_on_the_tape() {
    let before = adjoints_written_out();
    let (_, gradient) = outside_grad(&[1.0, 2.0, 3.0]);
    assert_eq!(adjoints_written_out(), before);
    assert_eq!(gradient, vec![2.0, 4.0, 6.0]);
}

/// A primitive's derivative is its partials function's, even when its body could be written
/// out.
#[reverse_diff(primitive = clipped_partials)]
fn clipped(x: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    for i in 0..n {
        total += x[i] * x[i];
    }
    total
}

fn clipped_partials(x: &[f64]) -> Vec<f64> {
    x.iter().map(|v| (2.0 * v).clamp(-1.0, 1.0)).collect()
}

/// `#[reverse_diff(tape)]` keeps the tape for a body that could be written out.
#[reverse_diff(tape)]
fn taped(x: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    for i in 0..n {
        total += x[i] * x[i];
    }
    total
}

#[test]
fn primitives_and_the_tape_option_keep_the_tape() {
    let before = adjoints_written_out();
    assert_eq!(clipped_grad(&[0.3, -2.0, 1.5]).1, vec![0.6, -1.0, 1.0]);
    assert_eq!(clipped_vjp(&[0.3, -2.0, 1.5], &1.0).1, vec![0.6, -1.0, 1.0]);
    assert_eq!(taped_grad(&[0.3, -2.0]).1, vec![0.6, -4.0]);
    assert_eq!(adjoints_written_out(), before);
}

/// `.value()` (a constant of the value, a method of `ad::Real`), a parameter named like the
/// generated code's locals, and a lint on a loop.
#[reverse_diff]
fn unusual(x: &[f64], __ad_g: f64) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    #[allow(clippy::needless_range_loop)]
    for i in 0..n {
        total += x[i] * x[i].value() * __ad_g;
    }
    total
}

#[reverse_diff]
fn with_a_lint(x: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    #[allow(clippy::needless_range_loop)]
    for i in 0..n {
        total += x[i] * x[i];
    }
    total
}

/// A loop variable and a loop's integer `let` named like the generated code's locals (these
/// did not compile when written out).
#[reverse_diff]
fn generated_names(x: &[f64]) -> f64 {
    let n = x.len();
    let mut s = 0.0;
    for __ad_stack in 0..n {
        let __ad_g = (__ad_stack + 1) % n;
        s = s * x[__ad_stack] + 0.5 * x[__ad_g];
    }
    s
}

#[test]
fn unusual_bodies_keep_the_tape_and_lints_do_not() {
    let before = adjoints_written_out();
    let (_, (dx, dg)) = unusual_grad(&[1.0, 2.0], 3.0);
    assert_eq!((dx, dg), (vec![3.0, 6.0], 5.0));
    let x = [0.5, -1.5, 2.0];
    let (value, gradient) = generated_names_grad(&x);
    assert_eq!(value, generated_names(&x));
    assert_close(&gradient, &central(generated_names, &x), 1e-6);
    assert_eq!(adjoints_written_out(), before);
    let ((_, written), (_, taped)) = both(|| with_a_lint_grad(&[1.0, -2.0]));
    assert_eq!(written, vec![2.0, -4.0]);
    assert_eq!(taped, written);
}

/// An assignment's place out of bounds: its right-hand side, evaluated first, panics first.
#[reverse_diff]
fn out_of_bounds(x: &[f64]) -> f64 {
    let mut k = vec![0.0; 3];
    for i in 0..1 {
        k[i + 5] = x[i + 5] * 2.0 + k[0];
    }
    k[0]
}

#[test]
fn an_index_out_of_bounds_panics_with_the_functions_message() {
    let message = |call: fn() -> f64| {
        let panic = std::panic::catch_unwind(call).unwrap_err();
        panic.downcast::<String>().map(|message| *message).unwrap()
    };
    let plain = message(|| out_of_bounds(&[1.0, 2.0]));
    let written = message(|| out_of_bounds_grad(&[1.0, 2.0]).0);
    assert!(plain.contains("the len is 2 but the index is 5"), "{plain}");
    assert_eq!(written, plain);
}

/// A name read only inside a macro's string (`format!("{s}")`), which no walk over the
/// expressions sees: such bodies keep the tape (here the written-out adjoint had treated `s` as
/// a sum read only once final, and passed the partials at its final value).
#[reverse_diff]
fn formatted(x: &[f64]) -> f64 {
    let n = x.len();
    let mut s = 0.0;
    let mut y = vec![0.0; n];
    for i in 0..n {
        s += x[i] * x[i];
        let j = format!("{s}").len() % n;
        y[i] = x[j] * x[i];
    }
    let mut t = 0.0;
    for i in 0..n {
        t += y[i];
    }
    t
}

#[test]
fn a_name_read_in_a_format_string_keeps_the_tape() {
    let x = [0.3, -0.7, 1.1, 0.4, -0.2, 0.9];
    let before = adjoints_written_out();
    let (_, gradient) = formatted_grad(&x);
    assert_eq!(adjoints_written_out(), before);
    // The tape's: `j` is a constant of the values.
    set_generated_adjoints(false);
    assert_eq!(gradient, formatted_grad(&x).1);
    set_generated_adjoints(true);
}

/// Branches on values: a log-sum-exp's running maximum (`if v > largest`), and an `else if`
/// chain choosing a term per element; the branch each took is kept for the adjoint.
#[reverse_diff]
fn branches(x: &[f64]) -> f64 {
    let n = x.len();
    let mut largest = x[0];
    for i in 1..n {
        if x[i] > largest {
            largest = x[i];
        }
    }
    let mut sum = 0.0;
    for i in 0..n {
        sum += (x[i] - largest).exp();
    }
    let mut total = largest + sum.ln();
    for i in 0..n {
        if x[i] > 0.5 {
            total += x[i] * x[i];
        } else if x[i] < -0.5 {
            total -= x[i].sin();
        } else {
            total += 0.25 * x[i];
        }
    }
    total
}

#[test]
fn branches_on_values() {
    let x = [0.3, -0.7, 1.1, 0.4, -0.2, 0.9, 0.8];
    let ((value, written), (taped_value, taped)) = both(|| branches_grad(&x));
    assert_eq!(value, taped_value);
    assert_close(&written, &taped, 1e-12);
    assert_close(&written, &central(branches, &x), 1e-6);
}

/// A condition that changes a variable (`std::mem::replace(&mut prev, ..)`) and one that may
/// `break`: the adjoint would not see them, so these bodies keep the tape. (A third helper's
/// reproducers: wrong gradients, and a stack popped empty.)
#[reverse_diff]
fn replacing(x: &[f64]) -> f64 {
    let n = x.len();
    let mut prev = 0.0;
    let mut total = 0.0;
    for i in 0..n {
        if std::mem::replace(&mut prev, x[i]) < x[i] {
            total += x[i] * prev;
        }
    }
    total
}

#[reverse_diff]
fn breaking(x: &[f64], #[no_grad] w: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    for i in 0..n {
        if match w.get(i) {
            Some(&v) => v > 0.0,
            None => break,
        } {
            total += x[i] * x[i];
        }
    }
    total
}

/// A branch under `#[cfg]` (off here) keeps the tape, and a block's last assignment written
/// without its `;` is written out.
#[reverse_diff]
fn gated(x: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    for i in 0..n {
        #[cfg(any())]
        if x[i] > 1.0 {
            total -= x[i];
        }
        total += x[i] * x[i];
    }
    total
}

#[reverse_diff]
fn running_max(x: &[f64]) -> f64 {
    let n = x.len();
    let mut largest = x[0];
    for i in 1..n {
        if x[i] > largest {
            largest = x[i]
        }
    }
    largest * largest
}

#[test]
fn conditions_that_do_more_than_read_keep_the_tape() {
    let before = adjoints_written_out();
    assert_eq!(replacing_grad(&[0.5, 1.0, 2.0]).1, vec![1.0, 2.0, 4.0]);
    assert_eq!(
        breaking_grad(&[0.5, 1.0, 2.0], &[1.0, 1.0]).1,
        vec![1.0, 2.0, 0.0]
    );
    assert_eq!(gated_grad(&[0.5, 2.0, 3.0]).1, vec![1.0, 4.0, 6.0]);
    assert_eq!(adjoints_written_out(), before);
    let ((_, written), (_, taped)) = both(|| running_max_grad(&[0.5, 3.0, 2.0]));
    assert_eq!(written, vec![0.0, 6.0, 0.0]);
    assert_eq!(taped, written);
}

/// GMM's `Q (x − μ)` and its squared norm, per component: an array set whole and then added
/// to by a triangle of terms, a sum set to 0 and then added to. Those additions keep no value
/// (nothing reads the array or the sum between its setting and them): the gradient must still
/// be the tape's.
#[reverse_diff]
fn triangle(q: &[f64], l: &[f64], #[no_grad] x: &[f64], d: usize, k: usize) -> f64 {
    let below = d * (d - 1) / 2;
    let mut transformed = vec![0.0; d];
    let mut norm = 0.0;
    let mut total = 0.0;
    for c in 0..k {
        for j in 0..d {
            transformed[j] = q[c * d + j].exp() * x[j];
        }
        for col in 0..d {
            for row in col + 1..d {
                let at = c * below + col * (2 * d - col - 1) / 2 + (row - col - 1);
                transformed[row] += l[at] * x[col] * q[c * d + col];
            }
        }
        norm = 0.0;
        for j in 0..d {
            norm += transformed[j] * transformed[j];
        }
        total += (c as f64 + 1.0) * norm.sqrt();
    }
    total + 0.5 * norm
}

#[test]
fn additions_after_a_whole_overwrite() {
    let (d, k) = (4, 3);
    let q: Vec<f64> = (0..d * k).map(|i| 0.1 * (i as f64).sin()).collect();
    let l: Vec<f64> = (0..k * d * (d - 1) / 2)
        .map(|i| 0.3 * (i as f64 * 0.7).cos())
        .collect();
    let x = [0.5, -1.0, 0.8, 1.3];
    let ((value, written), (taped_value, taped)) = both(|| triangle_grad(&q, &l, &x, d, k));
    assert_eq!(value, taped_value);
    assert_close(&written.0, &taped.0, 1e-12);
    assert_close(&written.1, &taped.1, 1e-12);
    assert_close(
        &written.0,
        &central(|q| triangle(q, &l, &x, d, k), &q),
        1e-6,
    );
    assert_close(
        &written.1,
        &central(|l| triangle(&q, l, &x, d, k), &l),
        1e-6,
    );
}

/// Additions that must keep their values: in `read_between` a statement reads the array
/// between its setting and the additions; in `partly_set` the setting leaves `t[0]` as it
/// was, and the next step's first statement reads it. Keeping nothing would give both a
/// wrong gradient.
#[reverse_diff]
fn read_between(x: &[f64], steps: usize) -> f64 {
    let n = x.len();
    let mut t = vec![0.0; n];
    let mut y = 0.0;
    for _ in 0..steps {
        for j in 0..n {
            t[j] = x[j] * x[j];
        }
        y += t[0] * t[1];
        for j in 0..n {
            t[j] += x[j] * y;
        }
    }
    y
}

#[reverse_diff]
fn partly_set(x: &[f64], steps: usize) -> f64 {
    let n = x.len();
    let mut t = vec![0.0; n];
    let mut y = 0.0;
    for _ in 0..steps {
        y += t[0] * x[0];
        for j in 1..n {
            t[j] = x[j] * y;
        }
        for j in 0..n {
            t[j] += x[j] * x[j];
        }
    }
    y
}

#[test]
fn additions_that_must_keep_their_values() {
    let x = [0.5, -1.2, 0.8, 1.1];
    let ((_, written), (_, taped)) = both(|| read_between_grad(&x, 3));
    assert_close(&written, &taped, 1e-12);
    assert_close(&written, &central(|x| read_between(x, 3), &x), 1e-6);
    let ((_, written), (_, taped)) = both(|| partly_set_grad(&x, 4));
    assert_close(&written, &taped, 1e-12);
    assert_close(&written, &central(|x| partly_set(x, 4), &x), 1e-6);
}

/// Reals bound by `let` in loops: a running maximum and a sum per row (a row's log-sum-exp),
/// a real computed from an element, and a second loop binding a `sum` of its own.
#[reverse_diff]
fn row_lse(x: &[f64], rows: usize) -> f64 {
    let cols = x.len() / rows;
    let mut total = 0.0;
    for r in 0..rows {
        let mut largest = x[r * cols];
        for c in 1..cols {
            if x[r * cols + c] > largest {
                largest = x[r * cols + c];
            }
        }
        let mut sum = 0.0;
        for c in 0..cols {
            let shifted = x[r * cols + c] - largest;
            sum += shifted.exp();
        }
        total += largest + sum.ln();
    }
    for c in 0..cols {
        let mut sum: f64 = 0.0;
        for r in 0..rows {
            sum += x[r * cols + c];
        }
        total += 0.1 * sum * sum;
    }
    total
}

#[test]
fn reals_bound_in_loops() {
    let x = [
        0.3, -1.2, 2.0, 0.7, 1.5, -0.4, 0.9, 0.1, -2.2, 1.1, 0.6, 0.0,
    ];
    let ((value, written), (taped_value, taped)) = both(|| row_lse_grad(&x, 3));
    assert_eq!(value.to_bits(), row_lse(&x, 3).to_bits());
    assert_eq!(value, taped_value);
    assert_close(&written, &taped, 1e-12);
    assert_close(&written, &central(|x| row_lse(x, 3), &x), 1e-6);
}

/// A pair of reals as the result, the `_vjp`'s cotangent a pair too, and a signature with a
/// trailing comma (as rustfmt writes long ones).
#[rustfmt::skip]
#[reverse_diff]
fn pair(
    x: &[f64],
    #[no_grad] weights: &[f64],
) -> (f64, f64) {
    let mut sum = 0.0;
    let mut squares = 0.0;
    for i in 0..x.len() {
        sum += weights[i] * x[i];
        squares += x[i] * x[i];
    }
    (sum.sin(), sum * squares)
}

#[test]
fn a_pair_as_the_result() {
    let (x, w) = ([0.3, -0.8, 1.4], [1.0, 2.0, -0.5]);
    let cotangent = (0.7, -1.3);
    let ((value, written), (taped_value, taped)) = both(|| pair_vjp(&x, &w, &cotangent));
    assert_eq!(value, pair(&x, &w));
    assert_eq!(value, taped_value);
    assert_close(&written, &taped, 1e-12);
    let combined = |x: &[f64]| {
        let (a, b) = pair(x, &w);
        cotangent.0 * a + cotangent.1 * b
    };
    assert_close(&written, &central(combined, &x), 1e-6);
}

/// Values read by the partials only through quotients: `q` as a numerator over a varying
/// divisor, `r` as a divisor, `t` in a product divided by a constant. Each is overwritten every
/// step, so their assignments must keep what they overwrite; `s`, read only through sums and
/// products by constants, need not.
#[reverse_diff]
fn quotients(x: &[f64], steps: usize) -> f64 {
    let n = x.len();
    let mut q = vec![1.0; n];
    let mut r = vec![2.0; n];
    let mut s = vec![0.0; n];
    let mut t = vec![0.0; n];
    let mut total = 0.0;
    for _ in 0..steps {
        for i in 1..n {
            q[i] = 0.5 * q[i] + q[i - 1] / (1.0 + x[i] * x[i]);
        }
        for i in 0..n {
            r[i] = 1.5 + x[i] * x[i] + q[i];
        }
        for i in 0..n {
            t[i] = 0.5 * t[i] + 1.0 + x[i];
        }
        for i in 0..n {
            s[i] = 0.5 * s[i] + x[i] / r[i] - 2.0 * q[i] + (x[i] * t[i]) / 3.0;
        }
        for i in 0..n {
            total += s[i];
        }
    }
    total
}

#[test]
fn values_read_through_quotients_are_kept() {
    let x = [0.3, -0.7, 1.1, 0.4];
    let ((_, written), (_, taped)) = both(|| quotients_grad(&x, 3));
    assert_close(&written, &taped, 1e-12);
    assert_close(&written, &central(|x| quotients(x, 3), &x), 1e-6);
}

/// A sum of terms by `ad::checkpoint::sum`, each term a block of rows with arrays of its own:
/// each term's adjoint runs right after it, and the sums of its adjoints are scaled by the
/// sum's adjoint (here `2 total`, the result being `total²`).
#[reverse_diff]
fn blocks(x: &[f64], w: &[f64], #[no_grad] data: &[f64], rows: usize, block: usize) -> f64 {
    let cols = w.len();
    let mut scale = 0.0;
    for j in 0..cols {
        scale += w[j] * w[j];
    }
    let total = ad::checkpoint::sum(rows.div_ceil(block), |b| {
        let mut row = vec![0.0; cols];
        let mut part = 0.0;
        for r in b * block..rows.min((b + 1) * block) {
            for j in 0..cols {
                row[j] = data[r * cols + j] * w[j] + x[r];
            }
            let mut largest = row[0];
            for j in 1..cols {
                if row[j] > largest {
                    largest = row[j];
                }
            }
            let mut sum = 0.0;
            for j in 0..cols {
                sum += (row[j] - largest).exp();
            }
            part += (largest + sum.ln()) * scale;
        }
        part
    });
    total * total
}

#[test]
fn sums_of_terms_by_checkpoint() {
    let (rows, cols) = (7, 3);
    let x: Vec<f64> = (0..rows).map(|r| 0.2 * (r as f64).sin()).collect();
    let w = [0.5, -0.3, 0.8];
    let data: Vec<f64> = (0..rows * cols).map(|i| (i as f64 * 0.37).cos()).collect();
    for block in [1, 3, 7] {
        let ((value, written), (taped_value, taped)) =
            both(|| blocks_grad(&x, &w, &data, rows, block));
        assert_eq!(
            value.to_bits(),
            blocks(&x, &w, &data, rows, block).to_bits()
        );
        assert_eq!(value, taped_value);
        assert_close(&written.0, &taped.0, 1e-12);
        assert_close(&written.1, &taped.1, 1e-12);
        assert_close(
            &written.0,
            &central(|x| blocks(x, &w, &data, rows, block), &x),
            1e-6,
        );
        assert_close(
            &written.1,
            &central(|w| blocks(&x, w, &data, rows, block), &w),
            1e-6,
        );
    }
}

/// A name bound by `let` in a loop and again after it (`largest`, `total`, as the suite's GMM
/// writes its two log-sum-exps): one variable, set by each. And a `let` in an inner loop
/// shadowing an outer loop's `s`, still read after the inner loop: that must stay two
/// variables (this body keeps the tape).
#[reverse_diff]
fn rebound(x: &[f64], rows: usize) -> f64 {
    let cols = x.len() / rows;
    let mut out = 0.0;
    for r in 0..rows {
        let mut largest = x[r * cols];
        for c in 1..cols {
            if x[r * cols + c] > largest {
                largest = x[r * cols + c];
            }
        }
        out += largest * largest;
    }
    let mut largest = x[0];
    for i in 1..x.len() {
        if x[i] > largest {
            largest = x[i];
        }
    }
    out + largest.sin()
}

#[reverse_diff]
fn shadowed(x: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    for i in 0..n {
        let s = x[i] * 2.0;
        for j in 0..n {
            let s = x[j] * x[i];
            total += s;
        }
        total += s * s;
    }
    total
}

#[test]
fn reals_bound_again_after_their_loop() {
    let x = [0.3, -1.2, 2.0, 0.7, 1.5, -0.4];
    let ((value, written), (taped_value, taped)) = both(|| rebound_grad(&x, 2));
    assert_eq!(value.to_bits(), rebound(&x, 2).to_bits());
    assert_eq!(value, taped_value);
    assert_close(&written, &taped, 1e-12);
    assert_close(&written, &central(|x| rebound(x, 2), &x), 1e-6);
    let before = adjoints_written_out();
    let (value, gradient) = shadowed_grad(&x);
    assert_eq!(adjoints_written_out(), before);
    assert_eq!(value.to_bits(), shadowed(&x).to_bits());
    assert_close(&gradient, &central(shadowed, &x), 1e-6);
}

/// Loop `let`s computed again by the loop's adjoint instead of kept (`d`, `e`, `f`: they read
/// only the parameter and each other), beside one that must be kept (`t` reads `s`, which the
/// loop changes after it).
#[reverse_diff]
fn computed_again(x: &[f64]) -> f64 {
    let mut total = 0.0;
    let mut s = 0.5;
    for i in 0..x.len() - 1 {
        let d = x[i + 1] - x[i] * x[i];
        let e = 1.0 - x[i];
        let f = d * e;
        let t = s * x[i];
        s += t;
        total += 100.0 * (d * d) + e * e + f.sin() + t * t;
    }
    total
}

#[test]
fn lets_computed_again() {
    let x = [0.3, -0.7, 1.1, 0.4, 0.9];
    let ((value, written), (taped_value, taped)) = both(|| computed_again_grad(&x));
    assert_eq!(value.to_bits(), computed_again(&x).to_bits());
    assert_eq!(value, taped_value);
    assert_close(&written, &taped, 1e-12);
    assert_close(&written, &central(computed_again, &x), 1e-6);
}

/// Two sums by `checkpoint::sum` reading the same names, the second of zero terms, and a
/// term's own names bound again after it (a closure variable, a later loop's `let`); a `let`
/// computed again after a loop whose `let` of the same name keeps its values (a helper's
/// findings: wrong gradients, or bodies that did not compile).
#[reverse_diff]
fn two_sums(x: &[f64], s: f64) -> f64 {
    let n = x.len();
    let s1 = ad::checkpoint::sum(n, |b| {
        let mut part = 0.0;
        for j in 0..n {
            let mut d = x[j] * x[b];
            d -= s;
            part += d;
        }
        part
    });
    let s2 = ad::checkpoint::sum(n, |part| x[part].sin() * s);
    let none = ad::checkpoint::sum(0, |b| x[b] * s);
    let mut acc = s1 * s2 + s1 + none;
    for i in 0..n {
        let mut d = x[i] * 2.0;
        d += s;
        acc += d * d;
    }
    acc
}

#[reverse_diff]
fn term_names_again(x: &[f64]) -> f64 {
    let n = x.len();
    let t1 = ad::checkpoint::sum(n, |b| {
        let mut part = 0.0;
        part += x[b] * x[b];
        part
    });
    let t2 = ad::checkpoint::sum(n, |part| x[part] * 2.0);
    t1 * t2
}

#[reverse_diff]
fn saved_then_computed(x: &[f64]) -> f64 {
    let mut s = 0.5;
    let mut acc = 0.0;
    for i in 0..x.len() {
        let d = s * x[i];
        acc += d * d;
        s += 0.1;
    }
    for i in 0..x.len() {
        let d = 2.0 * x[i];
        acc += d * x[i];
    }
    acc
}

#[test]
fn sums_and_lets_sharing_names() {
    let x = [0.37, -0.81, 1.13, 0.29, -0.52];
    let ((value, written), (taped_value, taped)) = both(|| two_sums_grad(&x, 0.7));
    assert_eq!(value.to_bits(), two_sums(&x, 0.7).to_bits());
    assert_eq!(value, taped_value);
    assert_close(&written.0, &taped.0, 1e-12);
    assert_close(&[written.1], &[taped.1], 1e-12);
    assert_close(&written.0, &central(|x| two_sums(x, 0.7), &x), 1e-6);
    let ((_, written), (_, taped)) = both(|| term_names_again_grad(&x));
    assert_close(&written, &taped, 1e-12);
    let ((value, written), (taped_value, taped)) = both(|| saved_then_computed_grad(&x));
    assert_eq!(value, taped_value);
    assert_close(&written, &taped, 1e-12);
    assert_close(&written, &central(saved_then_computed, &x), 1e-6);
}

/// A perceptron with ReLU hidden units (`pre.max(0.0)`) and outputs clipped from above
/// (`.min(2.0)`), over a batch: the selections are operations of the records, so the body is
/// written out.
#[reverse_diff]
fn relu_network(w: &[f64], #[no_grad] inputs: &[f64], hidden: usize, features: usize) -> f64 {
    let batch = inputs.len() / features;
    let bias = hidden * features;
    let out = bias + hidden;
    let mut total = 0.0;
    for b in 0..batch {
        let mut output = 0.0;
        for j in 0..hidden {
            let mut pre = w[bias + j];
            for k in 0..features {
                pre += w[j * features + k] * inputs[b * features + k];
            }
            output += w[out + j] * pre.max(0.0);
        }
        total += output.min(2.0) * output;
    }
    total
}

/// `relu_network`'s gradient by hand (the units active where `pre ≥ 0`, the receiver taking a
/// tie; the clip's derivative 1 where `output ≤ 2`), with how many units were inactive and how
/// many outputs clipped.
fn relu_network_by_hand(
    w: &[f64],
    inputs: &[f64],
    hidden: usize,
    features: usize,
) -> (Vec<f64>, usize, usize) {
    let (bias, out) = (hidden * features, hidden * features + hidden);
    let (mut gradient, mut inactive, mut clipped) = (vec![0.0; w.len()], 0, 0);
    for sample in inputs.chunks(features) {
        let pre: Vec<f64> = (0..hidden)
            .map(|j| {
                let row = &w[j * features..(j + 1) * features];
                w[bias + j] + row.iter().zip(sample).map(|(a, b)| a * b).sum::<f64>()
            })
            .collect();
        let output: f64 = (0..hidden).map(|j| w[out + j] * pre[j].max(0.0)).sum();
        clipped += usize::from(output > 2.0);
        let d_output = if output <= 2.0 { 2.0 * output } else { 2.0 };
        for j in 0..hidden {
            inactive += usize::from(pre[j] < 0.0);
            gradient[out + j] += d_output * pre[j].max(0.0);
            let d_pre = if pre[j] >= 0.0 {
                d_output * w[out + j]
            } else {
                0.0
            };
            gradient[bias + j] += d_pre;
            for k in 0..features {
                gradient[j * features + k] += d_pre * sample[k];
            }
        }
    }
    (gradient, inactive, clipped)
}

#[test]
fn relu_units_and_clips_are_written_out() {
    let (hidden, features) = (4, 3);
    let w: Vec<f64> = (0..hidden * features + 2 * hidden)
        .map(|i| ((i * 7) % 11) as f64 / 4.3 - 0.93)
        .collect();
    let inputs = [
        0.5, -1.0, 0.25, 1.5, 0.75, -0.5, -0.3, 0.9, 1.2, 0.1, -1.4, 0.6,
    ];
    let ((value, written), (taped_value, taped)) =
        both(|| relu_network_grad(&w, &inputs, hidden, features));
    assert_eq!(value.to_bits(), taped_value.to_bits());
    assert_eq!(
        value.to_bits(),
        relu_network(&w, &inputs, hidden, features).to_bits()
    );
    let (by_hand, inactive, clipped) = relu_network_by_hand(&w, &inputs, hidden, features);
    // Both sides of each kink are taken.
    assert!(
        inactive > 0 && inactive < hidden * 4,
        "{inactive} units inactive"
    );
    assert!(clipped > 0 && clipped < 4, "{clipped} outputs clipped");
    assert_close(&written, &by_hand, 1e-12);
    assert_close(&taped, &by_hand, 1e-12);
    assert_close(
        &written,
        &central(|w| relu_network(w, &inputs, hidden, features), &w),
        1e-6,
    );
}

/// Selections between two scalars and a clamp to a scalar bound, in one term.
#[reverse_diff]
fn selections(x: &[f64], y: &[f64], z: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += 3.0 * x[i].max(y[i]) + 5.0 * x[i].min(y[i]) + 7.0 * x[i].clamp(-1.0, z[i]);
    }
    total
}

#[test]
fn selections_follow_the_conventions() {
    // Per entry: x the larger; y the larger; a tie everywhere (the receiver takes the
    // derivative); y NaN (ignored); x clamped to its upper bound z; x clamped to -1.
    let x = [2.0, 0.5, 1.0, 0.25, 3.0, -4.0];
    let y = [1.0, 1.5, 1.0, f64::NAN, 2.5, 0.0];
    let z = [3.0, 3.0, 1.0, 3.0, 2.0, 2.0];
    let ((value, written), (taped_value, taped)) = both(|| selections_grad(&x, &y, &z));
    assert_eq!(value.to_bits(), taped_value.to_bits());
    assert_eq!(value.to_bits(), selections(&x, &y, &z).to_bits());
    let expected = (
        vec![10.0, 12.0, 15.0, 15.0, 3.0, 5.0],
        vec![5.0, 3.0, 0.0, 0.0, 5.0, 3.0],
        vec![0.0, 0.0, 0.0, 0.0, 7.0, 0.0],
    );
    assert_eq!(written, expected);
    assert_eq!(taped, expected);
}

/// A selection under an infinite partial (`sqrt` at 0): the operand selected gets it, the
/// other nothing (not `∞ · 0`).
#[reverse_diff]
fn root_of_larger(x: &[f64], y: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += x[i].max(y[i]).sqrt();
    }
    total
}

#[test]
fn a_selection_passes_nothing_to_the_other_operand() {
    let (x, y) = ([0.0, 4.0, -1.0], [-1.0, 1.0, 9.0]);
    let ((_, written), (_, taped)) = both(|| root_of_larger_grad(&x, &y));
    let expected = (vec![f64::INFINITY, 0.25, 0.0], vec![0.0, 0.0, 1.0 / 6.0]);
    assert_eq!(written, expected);
    assert_eq!(taped, expected);
}

/// A selection inside an expression, in forward mode over the tape: `Σ x·max(x, ½)`, whose
/// Hessian is diagonal, 2 where `x > ½` and 0 below.
#[reverse_diff]
fn selected_square(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += x[i] * x[i].max(0.5);
    }
    total
}

#[test]
fn selections_have_second_derivatives() {
    let x = [0.25, 1.5, -2.0, 3.0];
    let direction = [1.0, -2.0, 0.5, 0.25];
    let (value, gradient, product) = selected_square_hvp(&x, &direction);
    assert_eq!(value.to_bits(), selected_square(&x).to_bits());
    assert_eq!(gradient, vec![0.5, 3.0, 0.5, 6.0]);
    assert_eq!(product, vec![0.0, -4.0, 0.0, 0.5]);
}

/// Functions of two reals in a right-hand side: `powf` with a literal and with a scalar
/// exponent, `hypot`, `atan2`, and `log` to a scalar base.
#[reverse_diff]
fn two_real_functions(x: &[f64], y: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += x[i].powf(1.5) + x[i].powf(y[i]) * 0.5 + x[i].hypot(y[i]) * y[i]
            - y[i].atan2(x[i])
            + x[i].log(y[i] + 2.0);
    }
    total
}

#[test]
fn functions_of_two_reals_are_written_out() {
    let (x, y) = ([0.5, 1.5, 2.25, 3.0], [-0.5, 0.75, 1.25, 2.0]);
    let ((value, (dx, dy)), (taped_value, (tx, ty))) = both(|| two_real_functions_grad(&x, &y));
    assert_eq!(value.to_bits(), taped_value.to_bits());
    assert_eq!(value.to_bits(), two_real_functions(&x, &y).to_bits());
    assert_close(&dx, &tx, 1e-12);
    assert_close(&dy, &ty, 1e-12);
    for i in 0..x.len() {
        let (x, y) = (x[i], y[i]);
        let (h, r2, base) = (x.hypot(y), x * x + y * y, (y + 2.0).ln());
        let by_hand_x =
            1.5 * x.sqrt() + 0.5 * y * x.powf(y - 1.0) + x / h * y + y / r2 + 1.0 / (x * base);
        let by_hand_y =
            0.5 * x.powf(y) * x.ln() + y / h * y + h - x / r2 - x.ln() / (base * base * (y + 2.0));
        assert_relative_eq!(dx[i], by_hand_x, max_relative = 1e-12);
        assert_relative_eq!(dy[i], by_hand_y, max_relative = 1e-12);
    }
    let joined: Vec<f64> = x.iter().chain(&y).copied().collect();
    let central = central(|v| two_real_functions(&v[..4], &v[4..]), &joined);
    assert_close(&[dx, dy].concat(), &central, 1e-6);
}

/// A selection bound by a `let` whose reader has an infinite partial (`sqrt` at 0): the
/// operand not selected gets nothing, written out as on the tape (where a `Var`'s selection
/// gives it no slot), not `∞ · 0`.
#[reverse_diff]
fn root_of_relu(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        let r = x[i].max(0.0);
        total += r.sqrt();
    }
    total
}

/// The same with `min` between two scalars.
#[reverse_diff]
fn root_of_smaller(x: &[f64], y: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        let m = x[i].min(y[i]);
        total += (-m).sqrt();
    }
    total
}

/// The same with a clamp, read by `ln`.
#[reverse_diff]
fn log_of_clamped(y: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..y.len() {
        let q = y[i].clamp(0.0, 1.0);
        total -= q.ln();
    }
    total
}

#[test]
fn selections_bound_first_pass_nothing_to_what_they_did_not_select() {
    let inf = f64::INFINITY;
    // -1: 0 selected; 0: a tie, `x` selected, at the pole of sqrt's derivative; 4: `x`.
    let x = [-1.0, 0.0, 4.0];
    let ((value, written), (taped_value, taped)) = both(|| root_of_relu_grad(&x));
    assert_eq!(value.to_bits(), taped_value.to_bits());
    assert_eq!(value.to_bits(), root_of_relu(&x).to_bits());
    assert_eq!(written, vec![0.0, inf, 0.25]);
    assert_eq!(taped, written);

    // `x` selected at 0 (the pole), `x` selected at -4, `y` selected at -1.
    let (x, y) = ([0.0, -4.0, 1.0], [1.0, 1.0, -1.0]);
    let ((value, written), (taped_value, taped)) = both(|| root_of_smaller_grad(&x, &y));
    assert_eq!(value.to_bits(), taped_value.to_bits());
    assert_eq!(value.to_bits(), root_of_smaller(&x, &y).to_bits());
    assert_eq!(written, (vec![-inf, -0.25, 0.0], vec![0.0, 0.0, -0.5]));
    assert_eq!(taped, written);

    // The lower bound selected (the value is +∞), `y` inside, the upper bound selected.
    let y = [-0.5, 0.5, 2.0];
    let ((value, written), (taped_value, taped)) = both(|| log_of_clamped_grad(&y));
    assert_eq!(value.to_bits(), taped_value.to_bits());
    assert_eq!(value.to_bits(), log_of_clamped(&y).to_bits());
    assert_eq!(written, vec![0.0, -2.0, 0.0]);
    assert_eq!(taped, written);
}

/// The determinant of the minor of `a` (row-major, `ell × ell`) made of the columns from
/// `column` on and the rows not in `used`, by expansion along its first column (gradbench's
/// det expands along rows): recursive, so its adjoint is split into a forward and a reverse
/// function calling themselves.
#[reverse_diff]
fn minor(a: &[f64], ell: usize, column: usize, used: u64) -> f64 {
    if column == ell - 1 {
        let last = used.trailing_ones() as usize;
        return a[last * ell + column];
    }
    let mut sign = 1.0;
    let mut expansion = 0.0;
    for row in 0..ell {
        if (used >> row) & 1 == 0 {
            let cofactor: f64 = minor(a, ell, column + 1, used | (1 << row));
            expansion += a[row * ell + column] * cofactor * sign;
            sign = -sign;
        }
    }
    expansion
}

#[test]
fn a_recursive_determinant() {
    for ell in 1..=6usize {
        let a: Vec<f64> = (0..ell * ell)
            .map(|i| ((i * 37) % 11) as f64 / 11.0 - 0.4 + 0.05 * i as f64)
            .collect();
        let ((value, written), (taped_value, taped)) = both(|| minor_grad(&a, ell, 0, 0));
        assert_eq!(value.to_bits(), minor(&a, ell, 0, 0).to_bits());
        assert_eq!(value.to_bits(), taped_value.to_bits());
        assert_close(&written, &taped, 1e-12);
        // The gradient of a determinant is its cofactor matrix: `A` times it transposed is
        // `det(A) I`.
        for i in 0..ell {
            for j in 0..ell {
                let product: f64 = (0..ell)
                    .map(|k| a[i * ell + k] * written[j * ell + k])
                    .sum();
                let expected = if i == j { value } else { 0.0 };
                assert!((product - expected).abs() < 1e-12, "ell {ell}, ({i}, {j})");
            }
        }
        let differences = central(|a| minor(a, ell, 0, 0), &a);
        assert_close(&written, &differences, 1e-6);
        let cotangent = -2.5;
        let (_, pulled) = both(|| minor_vjp(&a, ell, 0, 0, &cotangent)).0;
        let scaled: Vec<f64> = written.iter().map(|g| cotangent * g).collect();
        assert_close(&pulled, &scaled, 1e-15);
    }
}

/// `c[k] + x (c[k + 1] + x (..))`, recursively: a real parameter passed down, whose adjoint
/// each reverse call returns.
#[reverse_diff]
fn horner(c: &[f64], x: f64, k: usize) -> f64 {
    if k == c.len() {
        return 0.0;
    }
    let rest: f64 = horner(c, x, k + 1);
    c[k] + x * rest
}

/// Two recursive calls per call, one on an expression of the real parameter, and a result
/// subtracting one of them.
#[reverse_diff]
fn branching(x: f64, y: &[f64], n: usize) -> f64 {
    if n < 2 {
        return x * y[n];
    }
    let mut left = 0.0;
    left -= branching(x, y, n - 1);
    let right: f64 = branching(0.5 * x + y[n], y, n - 2);
    left * right.sin() + y[n] * left
}

#[test]
fn recursions_with_real_parameters() {
    let c = [0.5, -1.25, 2.0, 0.75, -0.3];
    let x = 0.8;
    let ((value, (written_c, written_x)), (_, (taped_c, taped_x))) = both(|| horner_grad(&c, x, 0));
    let powers: Vec<f64> = (0..c.len()).map(|k| x.powi(k as i32)).collect();
    let expected_x: f64 = (1..c.len())
        .map(|k| k as f64 * c[k] * x.powi(k as i32 - 1))
        .sum();
    assert_relative_eq!(value, horner(&c, x, 0));
    assert_close(&written_c, &powers, 1e-14);
    assert_relative_eq!(written_x, expected_x, max_relative = 1e-14);
    assert_close(&written_c, &taped_c, 1e-14);
    assert_relative_eq!(written_x, taped_x, max_relative = 1e-14);

    let y = [0.3, -0.6, 0.9, 0.2, -0.4, 0.7, 1.1];
    for n in [0, 1, 4, 6] {
        let ((value, (written_x, written_y)), (taped_value, (taped_x, taped_y))) =
            both(|| branching_grad(x, &y, n));
        assert_eq!(value.to_bits(), branching(x, &y, n).to_bits());
        assert_eq!(value.to_bits(), taped_value.to_bits());
        assert_relative_eq!(written_x, taped_x, max_relative = 1e-12, epsilon = 1e-14);
        assert_close(&written_y, &taped_y, 1e-12);
        let mut point = vec![x];
        point.extend_from_slice(&y);
        let differences = central(|p| branching(p[0], &p[1..], n), &point);
        let mut gradient = vec![written_x];
        gradient.extend_from_slice(&written_y);
        assert_close(&gradient, &differences, 1e-6);
    }
}

/// Elements read at indices computed with lengths and `min`/`max` (`x[x.len() - 1]`,
/// `x[(i + k).min(x.len() - 1)]`), in a loop and at the top level.
#[reverse_diff]
fn computed_indices(x: &[f64], k: usize) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += x[i] * x[x.len() - 1] + x[(i + k).min(x.len() - 1)].sin();
    }
    total * x[k.max(1) - 1]
}

#[test]
fn indices_computed_with_lengths_and_min_or_max() {
    let x = [0.4, -0.7, 1.3, -0.2, 0.9];
    for k in [0, 2, 5] {
        agrees(
            |x| computed_indices(x, k),
            |x| computed_indices_grad(x, k),
            &x,
            1e-14,
        );
    }
}

/// A `#[no_grad]` scale halved on the way down: the argument `s * 0.5` stays a plain `f64`.
#[reverse_diff]
fn halving(a: &[f64], #[no_grad] s: f64, n: usize) -> f64 {
    if n == 0 {
        return a[0] * s;
    }
    let rest: f64 = halving(a, s * 0.5, n - 1);
    rest + a[n] * s
}

/// Simpson's rule on halved intervals, for `∫ t^p dt` on `[lo, hi]`, differentiated in `p`:
/// the interval's ends and the tolerance, `#[no_grad]`, are passed down as computed `f64`s
/// (`mid` bound by `let`, `tol / 2.0`), and the real `p` as it is.
#[reverse_diff]
fn simpson(
    p: f64,
    #[no_grad] lo: f64,
    #[no_grad] hi: f64,
    #[no_grad] tol: f64,
    depth: usize,
) -> f64 {
    let mid = 0.5 * (lo + hi);
    let whole = (hi - lo) / 6.0 * (lo.powf(p) + 4.0 * mid.powf(p) + hi.powf(p));
    if depth == 0 || tol > 1.0 {
        return whole;
    }
    let left: f64 = simpson(p, lo, mid, tol / 2.0, depth - 1);
    let right: f64 = simpson(p, mid, hi, tol / 2.0, depth - 1);
    left + right
}

#[test]
fn recursions_pass_computed_constants_to_no_grad_parameters() {
    let a = [0.5, -0.3, 0.8, 1.2];
    let (value, gradient) = halving_grad(&a, 1.5, 3);
    // `a[k]` is scaled by 1.5 / 2^(3 - k).
    assert_close(&gradient, &[0.1875, 0.375, 0.75, 1.5], 0.0);
    assert_eq!(value.to_bits(), halving(&a, 1.5, 3).to_bits());
    agrees(|a| halving(a, 1.5, 3), |a| halving_grad(a, 1.5, 3), &a, 0.0);

    // One real input: `_grad` runs forward mode, on which the arguments are the same `f64`s.
    let (value, derivative) = simpson_grad(1.5, 1.0, 2.0, 1e-3, 4);
    assert_eq!(value.to_bits(), simpson(1.5, 1.0, 2.0, 1e-3, 4).to_bits());
    let h = 1e-6;
    let difference =
        (simpson(1.5 + h, 1.0, 2.0, 1e-3, 4) - simpson(1.5 - h, 1.0, 2.0, 1e-3, 4)) / (2.0 * h);
    assert_relative_eq!(derivative, difference, max_relative = 1e-8);
    // The quadrature of `t^p ln t`, to the rule's accuracy.
    let exact = 2f64.powf(2.5) * (2f64.ln() / 2.5 - 1.0 / 6.25) + 1.0 / 6.25;
    assert_relative_eq!(derivative, exact, max_relative = 1e-8);
}

/// A sign flipped by an integer condition (negated back, nothing kept), reals bound in the
/// blocks of a branch on a real (kept as the block ends), and a passive real.
#[reverse_diff]
fn alternating(x: &[f64]) -> f64 {
    let mut total = 0.0;
    let mut sign = 1.0;
    let mut scale = 2.0;
    for i in 0..x.len() {
        if x[i] > 0.0 {
            let t = x[i] * x[i];
            total += sign * t * scale;
        } else {
            let u: f64 = x[i].sin();
            let v = u * u;
            total -= (u + v) * sign;
        }
        if i % 3 != 0 {
            sign = -sign;
        }
        scale = scale * 0.5 + 1.0;
    }
    total
}

#[test]
fn signs_negated_back_and_reals_of_branches() {
    let x = [0.4, -0.7, 1.3, -0.2, 0.9, 0.05, -1.1, 0.6];
    agrees(alternating, alternating_grad, &x, 1e-14);
}

/// Recursions over subslices: the tail (`&x[1..]`), and the two halves, each call adding to
/// the adjoints of its own elements.
#[reverse_diff]
fn neighbours(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let rest: f64 = neighbours(&x[1..]);
    x[0] * x[1] + rest.sin()
}

#[reverse_diff]
fn halves(x: &[f64]) -> f64 {
    if x.len() == 1 {
        return x[0] * x[0];
    }
    let middle = x.len() / 2;
    let left: f64 = halves(&x[..middle]);
    let right: f64 = halves(&x[middle..]);
    left * right + left
}

#[test]
fn recursions_over_subslices() {
    let x = [0.37, -0.81, 1.13, 0.29, -0.52, 0.66, 0.18];
    type Function = fn(&[f64]) -> f64;
    type Gradient = fn(&[f64]) -> (f64, Vec<f64>);
    let functions: [(Function, Gradient); 2] =
        [(neighbours, neighbours_grad), (halves, halves_grad)];
    for (f, grad) in functions {
        agrees(f, grad, &x, 1e-13);
    }
}

/// Constant data passed down as a subslice beside the differentiable one: written out.
#[reverse_diff]
fn weighted_tail(x: &[f64], #[no_grad] w: &[f64]) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    let rest: f64 = weighted_tail(&x[1..], &w[1..]);
    w[0] * x[0] * x[0] + 0.5 * rest
}

/// An early return, with a parameter taken by value that cannot be passed twice (`Vec`): the
/// tape's companions (split, the body would not compile).
#[reverse_diff]
fn owned_scales(x: &[f64], #[no_grad] scales: Vec<f64>) -> f64 {
    if scales.is_empty() {
        return x[0];
    }
    let mut total = 0.0;
    for i in 0..x.len() {
        total += scales[i] * x[i] * x[i];
    }
    total
}

#[test]
fn recursions_with_constant_data_and_owned_parameters() {
    let x = [0.4, -1.2, 0.7, 2.1];
    let w = [1.5, -0.5, 2.0, 0.25];
    let ((value, written), (taped_value, taped)) = both(|| weighted_tail_grad(&x, &w));
    assert_eq!(value.to_bits(), weighted_tail(&x, &w).to_bits());
    assert_eq!(value.to_bits(), taped_value.to_bits());
    assert_close(&written, &taped, 1e-14);
    let expected: Vec<f64> = (0..x.len())
        .map(|i| 0.5f64.powi(i as i32) * 2.0 * w[i] * x[i])
        .collect();
    assert_close(&written, &expected, 1e-14);

    let before = adjoints_written_out();
    let scales = vec![1.0, 3.0, 0.0, -1.0];
    let expected: Vec<f64> = (0..x.len()).map(|i| 2.0 * scales[i] * x[i]).collect();
    assert_eq!(owned_scales_grad(&x, scales).1, expected);
    assert_eq!(owned_scales_grad(&x, vec![]).1, vec![1.0, 0.0, 0.0, 0.0]);
    assert_eq!(adjoints_written_out(), before);
}

/// A recursive call whose argument calls `tanh` of a local real, with `+=` (a helper's
/// finding: the real was taken for unread, as if the call kept partials, and not restored).
#[reverse_diff]
fn tanh_tree(w: &[f64], x: f64, depth: usize) -> f64 {
    if depth == 0 {
        return x * w[0];
    }
    let mut h = x * w[depth];
    h += w[0];
    let mut out = 0.0;
    out += tanh_tree(w, h.tanh(), depth - 1);
    for i in 0..2 {
        let t = out + x * w[i];
        let mut r = 0.5 * t;
        r -= tanh_tree(w, t.sin(), depth - 1);
        out += r;
    }
    out + h
}

/// `v = -v` then `v += e` (a helper's finding: the addition kept nothing, as after a whole
/// overwrite, and negating back then undid the wrong value): a ball reflected off the floor
/// and kicked.
#[reverse_diff]
fn bounce(kicks: &[f64], p0: f64, v0: f64) -> f64 {
    let mut p = p0;
    let mut v = v0;
    for i in 0..kicks.len() {
        p += v * 0.1 - 0.005 * v * v.abs();
        if p < 0.0 {
            p = -p;
            v = -v;
            v += kicks[i];
        }
        v -= 0.981 + 0.02 * v * v;
    }
    p * p
}

#[test]
fn values_read_by_calls_and_negations_are_restored() {
    let w = [0.5, -1.2, 0.7];
    let ((value, (written_w, written_x)), (_, (taped_w, taped_x))) =
        both(|| tanh_tree_grad(&w, 0.8, 2));
    assert_eq!(value.to_bits(), tanh_tree(&w, 0.8, 2).to_bits());
    assert_close(&written_w, &taped_w, 1e-13);
    assert_relative_eq!(written_x, taped_x, max_relative = 1e-13);
    let mut point = vec![0.8];
    point.extend_from_slice(&w);
    let differences = central(|p| tanh_tree(&p[1..], p[0], 2), &point);
    let mut gradient = vec![written_x];
    gradient.extend_from_slice(&written_w);
    assert_close(&gradient, &differences, 1e-6);

    let kicks = [0.5, 0.3, 0.2, 0.4, 0.1, 0.6];
    let ((value, (written_k, written_p, written_v)), (_, (taped_k, taped_p, taped_v))) =
        both(|| bounce_grad(&kicks, 1.0, -2.0));
    assert_eq!(value.to_bits(), bounce(&kicks, 1.0, -2.0).to_bits());
    assert_close(&written_k, &taped_k, 1e-13);
    assert_close(&[written_p, written_v], &[taped_p, taped_v], 1e-13);
    let mut point = vec![1.0, -2.0];
    point.extend_from_slice(&kicks);
    let differences = central(|p| bounce(&p[2..], p[0], p[1]), &point);
    let mut gradient = vec![written_p, written_v];
    gradient.extend_from_slice(&written_k);
    assert_close(&gradient, &differences, 1e-6);
}

/// An early return in a body that does not recurse: split too.
#[reverse_diff]
fn guarded_norm(x: &[f64], limit: usize) -> f64 {
    if x.len() > limit {
        let last = x.len() - 1;
        return x[0] * x[last];
    }
    let mut total = 0.0;
    for i in 0..x.len() {
        total += x[i] * x[i];
    }
    total.sqrt()
}

#[test]
fn an_early_return_without_recursion() {
    let x = [0.6, -1.4, 0.3, 2.2];
    for limit in [2, 8] {
        let f = |x: &[f64]| guarded_norm(x, limit);
        agrees(f, |x| guarded_norm_grad(x, limit), &x, 1e-15);
    }
}

/// Integers bound by `let` in a branch's blocks, computed again before their adjoints.
#[reverse_diff]
fn ring(x: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    for i in 0..n {
        if i + 1 < n {
            let j = i + 1;
            total += x[i] * x[j];
        } else {
            let first = 0;
            total += 0.5 * x[i] * x[first];
        }
    }
    total
}

#[test]
fn integers_bound_in_branches() {
    let x = [0.6, -1.4, 0.3, 2.2, -0.8];
    agrees(ring, ring_grad, &x, 1e-15);
}

/// A recursive call inside an expression, and an early return after a real is set: the tape's
/// companions, with the same derivatives.
#[reverse_diff]
fn nested_call(x: f64, n: usize) -> f64 {
    if n == 0 {
        return x;
    }
    x * nested_call(x, n - 1).sin()
}

#[reverse_diff]
fn late_return(x: &[f64], n: usize) -> f64 {
    let mut total = x[0] * x[0];
    if n == 0 {
        return total;
    }
    total += late_return(x, n - 1);
    total
}

#[test]
fn recursions_outside_the_shapes_keep_the_tape() {
    let before = adjoints_written_out();
    let (value, gradient) = nested_call_grad(0.7, 3);
    let h = 1e-6;
    let expected = (nested_call(0.7 + h, 3) - nested_call(0.7 - h, 3)) / (2.0 * h);
    assert_eq!(value, nested_call(0.7, 3));
    assert_relative_eq!(gradient, expected, max_relative = 1e-6);
    assert_eq!(late_return_grad(&[1.5, 2.0], 3).1, vec![12.0, 0.0]);
    assert_eq!(adjoints_written_out(), before);
}

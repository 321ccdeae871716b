//! Loop sums read once by a term of an enclosing sum: `let mut pre = b[j]; for k in 0..n { pre
//! += w[j * n + k] * x[k]; } total += f(pre);`, with `x` constants the companion lent
//! (`#[no_grad]` slices) and `pre` not read after the term. From 8 terms the row's sum is kept
//! unrecorded (`Accumulate::add_scaled_kept`) and the term takes it into the enclosing sum's
//! record (`Accumulate::add_absorbing`): its start's slot and its run, scaled by the term's
//! partial by `pre`, with no node of its own and no partial stored
//! (`ad::__private::sums_absorbed` counts them).
//!
//! Checked here: which rows are kept and which are not (fewer than 8 terms, constants the body
//! made, `f_pullback`'s tape, which is not lent); the value and the gradient bit for bit
//! against the same function with its inner loops run as written and against `f_pullback`
//! (the rows use disjoint weights, so the additions to each adjoint come in the same order);
//! `+=` and `-=` inside and outside, the constant first, a start that is a product or a
//! constant, the variable twice in its term, a term the macro cannot take whole (the row is
//! then recorded as the loop as written would), a row that advances a scalar (recorded); `f_vjp` and `f_jacobian`; central
//! differences; random sizes.

// Index loops are the form a layer is written in.
#![allow(clippy::needless_range_loop)]

mod common;

use ad::reverse_diff;
use common::{assert_gradient_matches, bits, data};
use proptest::prelude::*;

/// A perceptron's output, `Σⱼ v_j tanh(bⱼ + Σₖ wⱼₖ xₖ)`: weights, biases and output weights
/// in one parameter, the inputs constants.
#[reverse_diff]
fn perceptron(weights: &[f64], #[no_grad] x: &[f64], n: usize) -> f64 {
    let rows = weights.len() / (n + 2);
    let (w, rest) = weights.split_at(rows * n);
    let (b, v) = rest.split_at(rows);
    let mut output = 0.0;
    for j in 0..rows {
        let mut pre = b[j];
        for k in 0..n {
            pre += w[j * n + k] * x[k];
        }
        output += v[j] * pre.tanh();
    }
    output * output
}

/// [`perceptron`] with its inner loop run as written (an attribute keeps a loop from being
/// recorded whole): each row a record and a node.
#[reverse_diff]
fn perceptron_as_written(weights: &[f64], #[no_grad] x: &[f64], n: usize) -> f64 {
    let rows = weights.len() / (n + 2);
    let (w, rest) = weights.split_at(rows * n);
    let (b, v) = rest.split_at(rows);
    let mut output = 0.0;
    for j in 0..rows {
        let mut pre = b[j];
        #[allow(clippy::needless_range_loop)]
        for k in 0..n {
            pre += w[j * n + k] * x[k];
        }
        output += v[j] * pre.tanh();
    }
    output * output
}

/// The other forms: `-=` with the constant first, from a product, into `-=` with the
/// variable twice in its term; from a constant, at an offset into the constants.
#[reverse_diff]
fn forms(w: &[f64], b: &[f64], #[no_grad] x: &[f64]) -> f64 {
    let rows = b.len();
    let n = w.len() / rows;
    let mut total = 0.0;
    for j in 0..rows {
        let mut pre = b[j] * b[j];
        for k in 0..n {
            pre -= x[k] * w[j * n + k];
        }
        total -= pre * pre * b[j];
        let mut from_constant = 0.5;
        for k in 0..n {
            from_constant += w[j * n + k] * x[k + 1];
        }
        total += from_constant.sin() + 2.0 * from_constant;
    }
    total
}

/// [`forms`] with its inner loops run as written.
#[reverse_diff]
fn forms_as_written(w: &[f64], b: &[f64], #[no_grad] x: &[f64]) -> f64 {
    let rows = b.len();
    let n = w.len() / rows;
    let mut total = 0.0;
    for j in 0..rows {
        let mut pre = b[j] * b[j];
        #[allow(clippy::needless_range_loop)]
        for k in 0..n {
            pre -= x[k] * w[j * n + k];
        }
        total -= pre * pre * b[j];
        let mut from_constant = 0.5;
        #[allow(clippy::needless_range_loop)]
        for k in 0..n {
            from_constant += w[j * n + k] * x[k + 1];
        }
        total += from_constant.sin() + 2.0 * from_constant;
    }
    total
}

/// A term the macro cannot take whole (a closure's call): the row is recorded, as written.
#[reverse_diff]
fn through_a_closure(w: &[f64], #[no_grad] x: &[f64]) -> f64 {
    let n = x.len();
    let rows = w.len() / n;
    let squared = |value: f64| value * value;
    let mut total = 0.0;
    for j in 0..rows {
        let mut pre = w[j * n];
        for k in 0..n {
            pre += w[j * n + k] * x[k];
        }
        total += squared(pre);
    }
    total
}

/// Constants the body made: not lent, so the rows are not kept.
#[reverse_diff]
fn made_here(w: &[f64], #[no_grad] x: &[f64]) -> f64 {
    let n = x.len();
    let doubled: Vec<f64> = x.iter().map(|v| 2.0 * v).collect();
    let mut total = 0.0;
    for j in 0..w.len() / n {
        let mut pre = 0.0;
        for k in 0..n {
            pre += w[j * n + k] * doubled[k];
        }
        total += pre.cos();
    }
    total
}

/// A row that also advances a scalar (`power *= 0.5`): recorded, not kept.
#[reverse_diff]
fn advancing(w: &[f64], #[no_grad] x: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    for j in 0..w.len() / n {
        let mut power = 1.0;
        let mut pre = 0.0;
        for k in 0..n {
            pre += w[j * n + k] * x[k];
            power *= 0.5;
        }
        total += pre * power;
    }
    total
}

/// Runs `grad`, and says how many row sums it kept in their terms' records.
fn absorbed_by<R>(grad: impl FnOnce() -> R) -> (R, usize) {
    let before = ad::__private::sums_absorbed();
    let result = grad();
    (result, ad::__private::sums_absorbed() - before)
}

/// Checks `perceptron` at `rows` rows of `n` inputs against its loops as written, `f_pullback`
/// and central differences, and that its rows were kept from 8 inputs on.
fn check_perceptron(rows: usize, n: usize, seed: f64) -> Result<(), TestCaseError> {
    let (weights, x) = (data(rows * (n + 2), seed), data(n, seed + 1.0));
    let ((value, gradient), absorbed) = absorbed_by(|| perceptron_grad(&weights, &x, n));
    prop_assert_eq!(absorbed, if n >= 8 { rows } else { 0 }, "n = {}", n);
    prop_assert_eq!(value.to_bits(), perceptron(&weights, &x, n).to_bits());
    let (written, written_gradient) = perceptron_as_written_grad(&weights, &x, n);
    prop_assert_eq!(value.to_bits(), written.to_bits());
    prop_assert_eq!(bits(&gradient), bits(&written_gradient), "n = {}", n);
    let ((pulled, pullback), absorbed) = absorbed_by(|| perceptron_pullback(&weights, &x, n));
    prop_assert_eq!((pulled.to_bits(), absorbed), (value.to_bits(), 0));
    prop_assert_eq!(bits(&pullback.pull(&1.0)), bits(&gradient));
    assert_gradient_matches(|w| perceptron(w, &x, n), &weights, &gradient, 1e-6);
    Ok(())
}

#[test]
fn rows_are_kept_in_the_output_s_record_from_8_inputs_on() {
    for (rows, n) in [(3, 4), (3, 7), (3, 8), (5, 16), (2, 100)] {
        check_perceptron(rows, n, 2.0).unwrap();
    }
}

#[test]
fn the_other_companions_keep_rows_too() {
    let (rows, n) = (4, 16);
    let (weights, x) = (data(rows * (n + 2), 1.0), data(n, 2.0));
    let (_, gradient) = perceptron_grad(&weights, &x, n);
    // A cotangent that is a power of 2 scales every adjoint exactly.
    let ((value, pulled), absorbed) = absorbed_by(|| perceptron_vjp(&weights, &x, n, &-2.0));
    assert_eq!((value, absorbed), (perceptron(&weights, &x, n), rows));
    let doubled: Vec<u64> = gradient.iter().map(|g| (-2.0 * g).to_bits()).collect();
    assert_eq!(bits(&pulled), doubled);
    let ((_, jacobian), absorbed) = absorbed_by(|| perceptron_jacobian(&weights, &x, n));
    assert_eq!((jacobian.len(), absorbed), (1, rows));
    assert_eq!(bits(&jacobian[0]), bits(&gradient));
}

#[test]
fn every_form_gives_the_bits_of_its_loops_as_written() {
    // The tape's companions, which this test is about (the macro writes the adjoints of
    // some of these bodies out: tests/written_adjoints.rs).
    ad::__private::set_generated_adjoints(false);
    for (rows, n) in [(2, 5), (3, 8), (2, 40)] {
        let (w, b, x) = (data(rows * n, 1.0), data(rows, 2.0), data(n + 1, 3.0));
        let ((value, (gw, gb)), absorbed) = absorbed_by(|| forms_grad(&w, &b, &x));
        assert_eq!(absorbed, if n >= 8 { 2 * rows } else { 0 }, "n = {n}");
        assert_eq!(value.to_bits(), forms(&w, &b, &x).to_bits());
        let (written, (ww, wb)) = forms_as_written_grad(&w, &b, &x);
        assert_eq!(value.to_bits(), written.to_bits());
        assert_eq!((bits(&gw), bits(&gb)), (bits(&ww), bits(&wb)), "n = {n}");
        let all = [&w[..], &b[..]].concat();
        let split = |all: &[f64]| forms(&all[..rows * n], &all[rows * n..], &x);
        assert_gradient_matches(split, &all, &[gw, gb].concat(), 1e-6);
    }
}

/// A companion `f_grad` of weights and constants.
type Grad = fn(&[f64], &[f64]) -> (f64, Vec<f64>);

/// A function whose rows are not kept: its value, and its gradient against central
/// differences.
fn check_not_kept(f: fn(&[f64], &[f64]) -> f64, grad: Grad) {
    let (w, x) = (data(3 * 12, 1.0), data(12, 2.0));
    let ((value, gradient), absorbed) = absorbed_by(|| grad(&w, &x));
    assert_eq!((value.to_bits(), absorbed), (f(&w, &x).to_bits(), 0));
    assert_gradient_matches(|w| f(w, &x), &w, &gradient, 1e-6);
}

#[test]
fn a_term_the_macro_cannot_take_whole_records_the_row() {
    check_not_kept(through_a_closure::<f64>, through_a_closure_grad::<f64>);
}

#[test]
fn constants_the_body_made_are_not_kept() {
    check_not_kept(made_here::<f64>, made_here_grad::<f64>);
}

#[test]
fn a_row_that_advances_a_scalar_is_not_kept() {
    check_not_kept(advancing::<f64>, advancing_grad::<f64>);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random widths on both sides of 8, random rows and data.
    #[test]
    fn random_perceptrons_give_the_bits_of_their_loops_as_written(
        n in 1usize..40,
        rows in 1usize..5,
        seed in 0.0f64..10.0,
    ) {
        check_perceptron(rows, n, seed)?;
    }
}

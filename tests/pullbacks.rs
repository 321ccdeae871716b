//! Retained pullbacks (issue 17): `f_pullback` runs the forward pass once, and its `Pullback`
//! maps any number of cotangents to gradients without running the function again. Checked
//! against analytic Jacobians, `f_vjp`, `f_jacobian` and `f_jvp`, with a count of forward runs
//! and with other tapes, `_grad` calls and pullbacks alive on the thread at the same time.

mod common;

use ad::reverse_diff;
use approx::assert_relative_eq;
use common::{central_gradient, STEP};
use std::cell::Cell;

thread_local! {
    /// How many times `counted_model` ran on this thread, in any mode (per thread: the tests
    /// run in parallel).
    static RUNS: Cell<usize> = const { Cell::new(0) };
}

/// A small nonlinear model `r_i(w) = w0 · exp(w1 · t_i) − y_i` with residuals over constant data,
/// counting its runs.
#[reverse_diff]
fn counted_model(w: &[f64], #[no_grad] ts: &[f64], #[no_grad] ys: &[f64]) -> Vec<f64> {
    RUNS.with(|runs| runs.set(runs.get() + 1));
    ts.iter()
        .zip(ys)
        .map(|(t, y)| w[0] * (w[1] * t).exp() - y)
        .collect()
}

/// The analytic Jacobian of `counted_model`: row i is (exp(w1 t_i), w0 t_i exp(w1 t_i)).
fn model_jacobian(w: &[f64], ts: &[f64]) -> Vec<[f64; 2]> {
    ts.iter()
        .map(|t| [(w[1] * t).exp(), w[0] * t * (w[1] * t).exp()])
        .collect()
}

const TS: [f64; 4] = [0.0, 0.5, 1.0, 1.5];
const YS: [f64; 4] = [1.1, 1.9, 3.2, 5.1];

#[test]
fn rows_pulled_on_demand_match_the_analytic_jacobian_and_the_forward_pass_runs_once() {
    let w = [1.2, 0.9];
    let before = RUNS.with(Cell::get);
    let (value, pullback) = counted_model_pullback(&w, &TS, &YS);
    assert_eq!(value, counted_model(&w, &TS, &YS));
    let expected = model_jacobian(&w, &TS);
    for (i, row) in expected.iter().enumerate() {
        let mut one_hot = vec![0.0; TS.len()];
        one_hot[i] = 1.0;
        let pulled = pullback.pull(&one_hot);
        assert_relative_eq!(pulled[0], row[0], epsilon = 1e-14);
        assert_relative_eq!(pulled[1], row[1], epsilon = 1e-14);
    }
    // One call of the function itself above, one forward pass of the pullback, none per pull.
    assert_eq!(RUNS.with(Cell::get) - before, 2);
}

#[test]
fn pulls_equal_vjp_and_jacobian_rows_bit_for_bit() {
    let w = [0.7, -0.4];
    let (value, pullback) = counted_model_pullback(&w, &TS, &YS);
    let (jacobian_value, rows) = counted_model_jacobian(&w, &TS, &YS);
    assert_eq!(value, jacobian_value);
    for (i, row) in rows.iter().enumerate() {
        let mut one_hot = vec![0.0; TS.len()];
        one_hot[i] = 1.0;
        assert_eq!(&pullback.pull(&one_hot), row);
    }
    for cotangent in [[1.0, -2.0, 0.5, 3.0], [0.25, 0.0, -1.0, 2.0]] {
        let (_, vjp) = counted_model_vjp(&w, &TS, &YS, &cotangent.to_vec());
        assert_eq!(pullback.pull(&cotangent.to_vec()), vjp);
    }
}

#[test]
fn gauss_newton_product_matches_the_analytic_one() {
    // Jᵀ(J u) with J u from forward mode and Jᵀ from the pullback, against the analytic J.
    let (w, u) = ([1.1, 0.3], [0.5, -2.0]);
    let (_, pullback) = counted_model_pullback(&w, &TS, &YS);
    let (_, ju) = counted_model_jvp(&w, &TS, &YS, &u);
    let product = pullback.pull(&ju);
    let jacobian = model_jacobian(&w, &TS);
    for k in 0..2 {
        let expected: f64 = jacobian
            .iter()
            .map(|row| row[k] * (row[0] * u[0] + row[1] * u[1]))
            .sum();
        assert_relative_eq!(product[k], expected, epsilon = 1e-12);
    }
}

/// A scalar result with two parameters of different shapes.
#[reverse_diff]
fn energy(x: f64, ys: &[f64]) -> f64 {
    ys.iter().map(|y| (x * y).sin()).sum::<f64>() + x * x
}

#[test]
fn scalar_result_pulls_the_scaled_gradient_and_owns_its_inputs() {
    let ys = vec![0.3, -1.0, 2.0];
    let (value, pullback) = energy_pullback(0.8, &ys);
    drop(ys); // the pullback borrows nothing from the arguments
    let (dx, dys) = pullback.pull(&2.0);
    let ys = [0.3, -1.0, 2.0];
    let expected = central_gradient(|p| energy(p[0], &p[1..]), &[0.8, 0.3, -1.0, 2.0], STEP);
    assert_eq!(value, energy(0.8, &ys));
    assert_relative_eq!(dx, 2.0 * expected[0], epsilon = 1e-8);
    for (got, want) in dys.iter().zip(&expected[1..]) {
        assert_relative_eq!(*got, 2.0 * want, epsilon = 1e-8);
    }
    assert!(!pullback.is_empty());
}

#[test]
fn other_tapes_and_pullbacks_alive_on_the_thread_do_not_interfere() {
    let w = [1.2, 0.9];
    let expected = model_jacobian(&w, &TS);
    let (_, first) = counted_model_pullback(&w, &TS, &YS);
    // A `_grad` call, a second pullback and a raw tape while the first pullback lives.
    let (_, (dx, _)) = energy_grad(0.8, &[1.0]);
    assert_relative_eq!(dx, 0.8f64.cos() + 1.6, epsilon = 1e-15);
    let (_, second) = energy_pullback(0.5, &[2.0]);
    let tape = ad::Tape::new();
    let x = tape.var(3.0);
    let row0 = first.pull(&vec![1.0, 0.0, 0.0, 0.0]);
    let y = x * x;
    tape.backward(y);
    assert_eq!(tape.adjoint(x), 6.0);
    drop(tape);
    // Dropped in the order they were made: the first pullback goes first.
    drop(first);
    let (dx, dys) = second.pull(&1.0);
    assert_relative_eq!(dx, 2.0 * 1.0f64.cos() + 1.0, epsilon = 1e-15);
    assert_relative_eq!(dys[0], 0.5 * 1.0f64.cos(), epsilon = 1e-15);
    assert_eq!(row0, expected[0].to_vec());
    // The thread's tape still works afterwards.
    let (_, (dx, _)) = energy_grad(0.8, &[1.0]);
    assert_relative_eq!(dx, 0.8f64.cos() + 1.6, epsilon = 1e-15);
}

#[test]
fn a_pullback_made_inside_a_grad_call_is_independent_of_it() {
    // A pullback recorded while a tape records (here inside a raw tape's session) and used
    // after that tape has gone.
    let tape = ad::Tape::new();
    let x = tape.var(2.0);
    let (_, pullback) = energy_pullback(0.5, &[2.0]);
    let y = x * 3.0;
    tape.backward(y);
    assert_eq!(tape.adjoint(x), 3.0);
    drop(tape);
    let (dx, _) = pullback.pull(&1.0);
    assert_relative_eq!(dx, 2.0 * 1.0f64.cos() + 1.0, epsilon = 1e-15);
}

#[test]
#[should_panic(expected = "the cotangent has 2 scalars but the result has 4")]
fn cotangent_of_the_wrong_length_is_reported() {
    let (_, pullback) = counted_model_pullback(&[1.0, 1.0], &TS, &YS);
    let _ = pullback.pull(&vec![1.0, 1.0]);
}

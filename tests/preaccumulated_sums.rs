//! `ad::checkpoint::sum(n, term)`: a sum whose terms are swept as each finishes and dropped from
//! the tape, leaving one record for the whole sum (preaccumulation). Its value must be the plain
//! loop's bit for bit, and its gradient the plain loop's to rounding (each partial is added up
//! over the terms before the sum's adjoint scales it, where the plain loop's sweep scales each
//! term's) and agree with central differences. The tape must hold one record for the sum.

mod common;

use ad::{reverse_diff, Tape, Var};
use common::{assert_gradient_matches, data, expect_panic};
use std::cell::Cell;

/// A least-squares loss of a small model over data points, the plain loop: each term has a
/// loop sum, a fused expression and a parameter read by an index that varies with the term.
#[reverse_diff]
fn loss_plain(w: &[f64], #[no_grad] xs: &[f64], #[no_grad] ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..xs.len() {
        let mut prediction = w[0];
        for j in 1..w.len() {
            prediction += w[j] * (xs[i] * j as f64).sin();
        }
        let residual = prediction.tanh() - ys[i];
        total += residual * residual + 0.01 * w[i % w.len()].powi(2);
    }
    0.5 * total
}

/// The same loss, its sum over points by `ad::checkpoint::sum`.
#[reverse_diff]
fn loss_summed(w: &[f64], #[no_grad] xs: &[f64], #[no_grad] ys: &[f64]) -> f64 {
    let total = ad::checkpoint::sum(xs.len(), |i| {
        let mut prediction = w[0];
        for j in 1..w.len() {
            prediction += w[j] * (xs[i] * j as f64).sin();
        }
        let residual = prediction.tanh() - ys[i];
        residual * residual + 0.01 * w[i % w.len()].powi(2)
    });
    0.5 * total
}

fn assert_close(got: &[f64], want: &[f64], tolerance: f64) {
    assert_eq!(got.len(), want.len());
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert!(
            (a - b).abs() <= tolerance * b.abs().max(1.0),
            "entry {i}: {a} against {b}"
        );
    }
}

#[test]
fn a_summed_loss_has_the_plain_loops_value_and_gradient() {
    let w = data(6, 0.3);
    for n in [0, 1, 2, 17, 300] {
        let (xs, ys) = (data(n, 1.7), data(n, 4.1));
        let (value, gradient) = loss_summed_grad(&w, &xs, &ys);
        let (plain_value, plain_gradient) = loss_plain_grad(&w, &xs, &ys);
        assert_eq!(value.to_bits(), plain_value.to_bits(), "n = {n}");
        assert_eq!(value.to_bits(), loss_summed(&w, &xs, &ys).to_bits());
        assert_eq!(value.to_bits(), loss_plain(&w, &xs, &ys).to_bits());
        assert_close(&gradient, &plain_gradient, 1e-13);
        assert_gradient_matches(|w| loss_plain(w, &xs, &ys), &w, &gradient, 1e-7);
    }
}

#[test]
fn the_tape_holds_one_record_for_the_sum() {
    let w = data(6, 0.3);
    let (xs, ys) = (data(300, 1.7), data(300, 4.1));
    let records = |f: fn(&[Var], &[f64], &[f64]) -> Var| common::records(&w, |w| f(w, &xs, &ys));
    // The plain loop records each term, two records each;
    // the sum, one record, and the product by 0.5.
    assert_eq!(records(loss_plain::<Var>), 300 * 2 + 2);
    assert_eq!(records(loss_summed::<Var>), 2);
    // That record reads each parameter once, with its partial summed over the terms.
    let tape = Tape::new();
    let vars: Vec<Var> = w.iter().map(|&x| tape.var(x)).collect();
    let total = ad::checkpoint::sum(xs.len(), |i| (vars[i % 6] * xs[i]).sin() * vars[0]);
    tape.backward(total);
    let gradient: Vec<f64> = vars.iter().map(|&v| tape.adjoint(v)).collect();
    let sum = |w: &[f64]| -> f64 { (0..xs.len()).map(|i| (w[i % 6] * xs[i]).sin() * w[0]).sum() };
    assert_gradient_matches(sum, &w, &gradient, 1e-7);
}

/// A term that reads a value recorded before the sum and not a parameter, and one that is a
/// parameter itself (no operation of its own), and constant terms.
#[reverse_diff]
fn mixed_terms(x: &[f64], #[no_grad] n: usize) -> f64 {
    let scale = x[0].exp() * x[1];
    let total = ad::checkpoint::sum(n, |i| match i % 3 {
        0 => scale * (x[i % x.len()] + 0.5).ln(),
        1 => x[1],
        _ => 2.5,
    });
    total * x[2]
}

#[reverse_diff]
fn mixed_terms_plain(x: &[f64], #[no_grad] n: usize) -> f64 {
    let scale = x[0].exp() * x[1];
    let mut total = 0.0;
    for i in 0..n {
        total += match i % 3 {
            0 => scale * (x[i % x.len()] + 0.5).ln(),
            1 => x[1],
            _ => 2.5,
        };
    }
    total * x[2]
}

#[test]
fn terms_may_be_values_from_before_the_sum_or_constants() {
    let x = [0.3, 1.2, -0.2, 0.9];
    for n in [0, 1, 2, 3, 10] {
        let (value, gradient) = mixed_terms_grad(&x, n);
        let (plain_value, plain_gradient) = mixed_terms_plain_grad(&x, n);
        assert_eq!(value.to_bits(), plain_value.to_bits(), "n = {n}");
        assert_close(&gradient, &plain_gradient, 1e-13);
        assert_gradient_matches(|x| mixed_terms(x, n), &x, &gradient, 1e-7);
    }
}

/// A sum inside a term of another: the inner one is recorded as a plain sum.
#[reverse_diff]
fn nested(x: &[f64]) -> f64 {
    ad::checkpoint::sum(4, |i| {
        let inner = ad::checkpoint::sum(3, |j| (x[j] * (i + j) as f64).cos());
        inner * inner * x[i % x.len()]
    })
}

#[reverse_diff]
fn nested_plain(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..4 {
        let mut inner = 0.0;
        for j in 0..3 {
            inner += (x[j] * (i + j) as f64).cos();
        }
        total += inner * inner * x[i % x.len()];
    }
    total
}

#[test]
fn a_sum_inside_a_term_is_recorded_as_it_is() {
    let x = [0.4, -1.1, 0.8];
    let (value, gradient) = nested_grad(&x);
    let (plain_value, plain_gradient) = nested_plain_grad(&x);
    assert_eq!(value.to_bits(), plain_value.to_bits());
    assert_close(&gradient, &plain_gradient, 1e-13);
    assert_gradient_matches(nested, &x, &gradient, 1e-7);
}

/// A term with a checkpointed loop inside: its replay records above the term's operations.
#[reverse_diff]
fn with_checkpoints(x: &[f64]) -> f64 {
    ad::checkpoint::sum(5, |i| {
        let k = x[0];
        let state = vec![x[1] + i as f64, x[2]];
        let state = ad::checkpoint::every(6, 2, state, move |y, _| {
            vec![y[0] + 0.1 * k * y[1], y[1] - 0.1 * y[0].sin()]
        });
        state[0] * state[1]
    })
}

#[reverse_diff]
fn with_checkpoints_plain(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..5 {
        let k = x[0];
        let mut state = vec![x[1] + i as f64, x[2]];
        for _ in 0..6 {
            state = vec![
                state[0] + 0.1 * k * state[1],
                state[1] - 0.1 * state[0].sin(),
            ];
        }
        total += state[0] * state[1];
    }
    total
}

#[test]
fn a_term_may_checkpoint_a_loop() {
    let x = [0.7, 0.2, -0.4];
    let (value, gradient) = with_checkpoints_grad(&x);
    let (plain_value, plain_gradient) = with_checkpoints_plain_grad(&x);
    assert_eq!(value.to_bits(), plain_value.to_bits());
    assert_close(&gradient, &plain_gradient, 1e-13);
    assert_gradient_matches(with_checkpoints, &x, &gradient, 1e-7);
}

/// Two scalar parameters: `_grad` runs in forward mode, `_hessian` on `Dual<Var>`; both add
/// the terms as they are.
#[reverse_diff]
fn few_inputs(a: f64, b: f64) -> f64 {
    ad::checkpoint::sum(7, |i| (a * i as f64 + b).sin() * b)
}

#[reverse_diff]
fn few_inputs_plain(a: f64, b: f64) -> f64 {
    let mut total = 0.0;
    for i in 0..7 {
        total += (a * i as f64 + b).sin() * b;
    }
    total
}

#[test]
fn forward_mode_and_second_derivatives_add_the_terms_as_they_are() {
    assert_eq!(few_inputs_grad(0.3, -0.8), few_inputs_plain_grad(0.3, -0.8));
    assert_eq!(
        few_inputs_hessian(0.3, -0.8),
        few_inputs_plain_hessian(0.3, -0.8)
    );
    let (_, (da, db)) = few_inputs_grad(0.3, -0.8);
    assert_gradient_matches(|x| few_inputs(x[0], x[1]), &[0.3, -0.8], &[da, db], 1e-7);
}

/// A term that panics past a threshold.
#[reverse_diff]
fn panicky(x: &[f64]) -> f64 {
    ad::checkpoint::sum(10, |i| {
        let t = x[0] * i as f64;
        assert!(t < 5.0, "term {i} too large");
        t.exp()
    })
}

#[test]
fn a_panicking_term_leaves_the_tape_usable() {
    let message = expect_panic(|| panicky_grad(&[1.0]));
    assert!(message.contains("term 5 too large"), "{message}");
    // The same thread records again, from a clean state.
    let (value, gradient) = panicky_grad(&[0.25]);
    let expected: f64 = (0..10).map(|i| (0.25 * i as f64).exp()).sum();
    let derivative: f64 = (0..10).map(|i| i as f64 * (0.25 * i as f64).exp()).sum();
    assert!((value - expected).abs() <= 1e-12 * expected);
    assert!((gradient[0] - derivative).abs() <= 1e-12 * derivative);
}

/// Against the contract: a term's value kept in a `Cell` and read after the sum. The derivative
/// is then wrong (its operations are gone), but the sweep must stay within its buffers: the
/// kept `Var`'s node is past the tape's end (memcheck, in `.ci/run`, checks the writes).
#[test]
fn a_value_kept_past_its_term_is_never_read_outside_the_buffers() {
    let tape = Tape::new();
    let x = tape.var(0.5);
    let kept = Cell::new(Var::constant(0.0));
    let total = ad::checkpoint::sum(3, |i| {
        let mut t = x;
        for _ in 0..200 {
            t = (t * 0.9 + i as f64).sin();
        }
        kept.set(t);
        t
    });
    let output = total + kept.get() * x;
    // The kept value was the 200th operation of its term; the tape now holds 4 nodes.
    assert_eq!(tape.len(), 4);
    tape.backward(output);
    assert!(tape.adjoint(x).is_finite());
}

/// Two sums as two outputs: `_jacobian` and a retained pullback sweep the sums' records.
#[reverse_diff]
fn two_sums(x: &[f64]) -> Vec<f64> {
    let first = ad::checkpoint::sum(6, |i| (x[i % 3] * x[(i + 1) % 3]).sin());
    let second = ad::checkpoint::sum(4, |i| x[i % 3].exp() * first);
    vec![first, second]
}

#[reverse_diff]
fn two_sums_plain(x: &[f64]) -> Vec<f64> {
    let mut first = 0.0;
    for i in 0..6 {
        first += (x[i % 3] * x[(i + 1) % 3]).sin();
    }
    let mut second = 0.0;
    for i in 0..4 {
        second += x[i % 3].exp() * first;
    }
    vec![first, second]
}

#[test]
fn jacobians_and_pullbacks_read_the_sums_records() {
    let x = [0.3, -0.6, 1.1];
    let (values, jacobian) = two_sums_jacobian(&x);
    let (plain_values, plain_jacobian) = two_sums_plain_jacobian(&x);
    assert_eq!(common::bits(&values), common::bits(&plain_values));
    for (row, plain_row) in jacobian.iter().zip(&plain_jacobian) {
        assert_close(row, plain_row, 1e-13);
    }
    let (_, pullback) = two_sums_pullback(&x);
    let cotangent = vec![0.5, -2.0];
    assert_close(
        &pullback.pull(&cotangent),
        &two_sums_plain_vjp(&x, &cotangent).1,
        1e-13,
    );
}

/// Each output a sum over its neighbours' products: `ad::sparse` takes a sum to read every node
/// recorded before it (a term's partial of 0 at this point leaves no slot), so its pattern
/// holds the plain loop's, and the Jacobian assembled with it is the dense one.
#[reverse_diff]
fn chain(x: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    for i in 0..x.len() - 1 {
        out.push(ad::checkpoint::sum(2, |_| x[i] * x[i + 1]));
    }
    out
}

#[reverse_diff]
fn chain_plain(x: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    for i in 0..x.len() - 1 {
        out.push(2.0 * (x[i] * x[i + 1]));
    }
    out
}

#[test]
fn sparse_jacobians_of_sums_take_them_to_read_everything_before_them() {
    // Found at a point where half the partials are 0, used at another.
    let zeros = [1.0, 0.0, 1.0, 0.0];
    let (_, pullback) = chain_pullback(&zeros);
    let sparsity = pullback.sparsity();
    let (_, plain) = chain_plain_pullback(&zeros);
    let plain_pattern = plain.sparsity();
    for row in 0..plain_pattern.pattern().major_dim() {
        for column in plain_pattern.pattern().lane(row) {
            let found = sparsity.pattern().lane(row).contains(column);
            assert!(found, "({row}, {column}) is missing from the sums' pattern");
        }
    }
    let x = [1.0, 2.0, 3.0, 4.0];
    let (_, pullback) = chain_pullback(&x);
    let matrix = pullback.sparse_jacobian_with(&sparsity);
    let (_, dense) = chain_jacobian(&x);
    for (row, entries) in dense.iter().enumerate() {
        for (column, &entry) in entries.iter().enumerate() {
            let found = matrix
                .get_entry(row, column)
                .map_or(0.0, |e| e.into_value());
            assert_eq!(found, entry, "({row}, {column})");
        }
    }
}

thread_local! {
    static CALLS: Cell<usize> = const { Cell::new(0) };
    static PANIC_AT: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// `y²` through a checkpoint whose step panics on the chosen call.
fn square_failing(y: Var) -> Var {
    ad::checkpoint::every(1, 1, vec![y], |z: &[Var], _| {
        let call = CALLS.with(|c| c.replace(c.get() + 1) + 1);
        assert!(call != PANIC_AT.with(Cell::get), "injected");
        vec![z[0] * z[0]]
    })[0]
}

/// `x³w² + xw` at (3, 0.5), through a checkpointed step holding a sum whose term
/// checkpoints `(xw)²`, its panic caught in the step (which then computes the same value).
fn gradient_with_a_panic_at(call: usize) -> (f64, f64) {
    CALLS.with(|c| c.set(0));
    PANIC_AT.with(|c| c.set(call));
    let tape = Tape::new();
    let (x, w) = (tape.var(3.0), tape.var(0.5));
    let state = ad::checkpoint::every(1, 1, vec![x * w, x], |s: &[Var], _| {
        let (a, b) = (s[0], s[1]);
        let square = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ad::checkpoint::sum(1, |_| square_failing(a))
        }));
        vec![square.unwrap_or_else(|_| a * a) * b, b]
    });
    let output = state[0] + state[1] * w;
    tape.backward(output);
    (tape.adjoint(x), tape.adjoint(w))
}

#[test]
fn a_panic_in_a_terms_sweep_leaves_the_outer_sweep_its_adjoints() {
    // ∂/∂x = 3x²w² + w = 7.25, ∂/∂w = 2x³w + x = 30, whichever replay panics: the calls
    // during the main sweep's replays include the one inside the term's own sweep, which
    // runs while the sum's partials stand in for the main sweep's adjoints.
    for call in [usize::MAX, 1, 2, 3, 4, 5] {
        assert_eq!(
            gradient_with_a_panic_at(call),
            (7.25, 30.0),
            "panic at call {call}"
        );
    }
}

#[test]
fn many_short_sums_on_a_long_tape_each_read_their_own_nodes() {
    // 2000 sums of 3 terms each after 10⁵ inputs: each sum notes what its terms read, where a
    // search of the partials of every node before it took 20 000 such sums 2.8 s (a helper's
    // measurement of 8ffb95f; not asserted, as no time is).
    let tape = Tape::new();
    let inputs: Vec<Var> = (0..100_000).map(|i| tape.var(i as f64 * 1e-5)).collect();
    let mut total = Var::constant(0.0);
    for k in 0..2000 {
        let x = inputs[k * 50];
        total += ad::checkpoint::sum(3, |i| x * (i as f64 + 1.0));
    }
    tape.backward(total);
    assert_eq!(tape.adjoint(inputs[50]), 6.0);
    assert_eq!(tape.adjoint(inputs[51]), 0.0);
}

/// A short sum after many nodes (a long first parameter): its terms' records are read for the
/// nodes they use, not the partials searched. Each term holds a loop of products of `u` with a
/// lent `#[no_grad]` slice and a long loop sum of products of `w`, which the tape keeps in
/// records of their own kinds: each parameter is read by one kind only.
#[reverse_diff]
fn after_padding(pad: &[f64], u: &[f64], w: &[f64], #[no_grad] c: &[f64]) -> f64 {
    let lead = pad[0] * pad[pad.len() - 1];
    lead + ad::checkpoint::sum(2, |i| {
        let mut dot = 0.0;
        for k in 0..u.len() {
            dot += u[k] * c[k];
        }
        let mut square = 0.0;
        for k in 0..w.len() {
            square += w[k] * w[k] * (i as f64 + 1.0);
        }
        dot * square
    })
}

#[reverse_diff]
fn after_padding_plain(pad: &[f64], u: &[f64], w: &[f64], #[no_grad] c: &[f64]) -> f64 {
    let lead = pad[0] * pad[pad.len() - 1];
    let mut total = 0.0;
    for i in 0..2 {
        let mut dot = 0.0;
        for k in 0..u.len() {
            dot += u[k] * c[k];
        }
        let mut square = 0.0;
        for k in 0..w.len() {
            square += w[k] * w[k] * (i as f64 + 1.0);
        }
        total += dot * square;
    }
    lead + total
}

#[test]
fn a_short_sum_after_many_nodes_reads_the_records_of_every_kind() {
    let (pad, u, w, c) = (
        data(20_000, 0.1),
        data(300, 1.1),
        data(300, 2.3),
        data(300, 5.9),
    );
    let (value, (dpad, du, dw)) = after_padding_grad(&pad, &u, &w, &c);
    let plain = after_padding_plain_grad(&pad, &u, &w, &c);
    assert_eq!(value.to_bits(), plain.0.to_bits());
    assert_close(&dpad, &plain.1 .0, 1e-13);
    assert_close(&du, &plain.1 .1, 1e-12);
    assert_close(&dw, &plain.1 .2, 1e-12);
    assert_gradient_matches(|u| after_padding_plain(&pad, u, &w, &c), &u, &du, 1e-7);
    assert_gradient_matches(|w| after_padding_plain(&pad, &u, w, &c), &w, &dw, 1e-7);
    // On a tape's own `Var`s (not a companion's held parameters) the loops are kept as runs.
    let tape = Tape::new();
    let seed = |values: &[f64]| -> Vec<Var> { values.iter().map(|&x| tape.var(x)).collect() };
    let (pad_vars, u_vars, w_vars) = (seed(&pad), seed(&u), seed(&w));
    let output = after_padding(&pad_vars, &u_vars, &w_vars, &c);
    assert!(ad::__private::loops_as_runs(&tape) > 0);
    tape.backward(output);
    let adjoints = |vars: &[Var]| -> Vec<f64> { vars.iter().map(|&v| tape.adjoint(v)).collect() };
    assert_close(&adjoints(&u_vars), &plain.1 .1, 1e-12);
    assert_close(&adjoints(&w_vars), &plain.1 .2, 1e-12);
}

//! Locals held as arrays that know their elements (`ad-macro/src/fuse/arrays.rs`): a `let mut k
//! = vec![0.0; n];` of the function's body whose every later mention is an element or range of
//! it, its length or the function's value. A loop recorded whole as a block leaves in `k` the
//! run of nodes it wrote, and a later loop's block takes it instead of reading each element
//! (`ad::__private::known_leaves` counts the leaves taken so).
//!
//! Checked here: the gradient bit for bit against the same function with every loop recorded
//! term by term (`ad::__private::record_term_by_term`), against the analytic gradient or central
//! differences, the value against the function written by hand; that the known runs are taken
//! where they hold (by blocks at offsets, by loop sums only whole), and forgotten where an
//! element is changed between the loops (a store, a range lent mutably), where taking them
//! would pass adjoints to nodes the elements no longer hold. Runge–Kutta stages, as gradbench's
//! ode writes them, are checked in `tests/whole_loops.rs`.

// Index loops are the form recorded whole.
#![allow(clippy::needless_range_loop)]

mod common;

use ad::{reverse_diff, Tape, Var};
use common::{assert_gradient_matches, bits};

/// `steps` steps of the heat equation's explicit scheme on `u` (its ends fixed), each a loop
/// reading `u[i - 1]`, `u[i]` and `u[i + 1]` that writes `next`, then a loop copying it back
/// scaled: each reads the runs the other wrote, at three offsets.
#[reverse_diff]
fn heat(u0: &[f64], c: f64, steps: usize) -> f64 {
    let n = u0.len();
    let mut u = vec![0.0; n];
    let mut next = vec![0.0; n];
    for i in 0..n {
        u[i] = u0[i] * 1.0;
    }
    for _ in 0..steps {
        next[0] = u[0];
        next[n - 1] = u[n - 1];
        for i in 1..n - 1 {
            next[i] = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        }
        for i in 0..n {
            u[i] = 0.99 * next[i];
        }
    }
    let mut total = 0.0;
    for i in 0..n {
        total += u[i] * u[i];
    }
    total
}

/// [`heat`] by hand, over `f64`, the same operations in the same order.
fn heat_by_hand(u0: &[f64], c: f64, steps: usize) -> f64 {
    let n = u0.len();
    let mut u: Vec<f64> = u0.iter().map(|u| u * 1.0).collect();
    let mut next = vec![0.0; n];
    for _ in 0..steps {
        (next[0], next[n - 1]) = (u[0], u[n - 1]);
        for i in 1..n - 1 {
            next[i] = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        }
        for i in 0..n {
            u[i] = 0.99 * next[i];
        }
    }
    u.iter().fold(0.0, |total, u| total + u * u)
}

/// `k[i] = xᵢ² + 1` by a loop, then (`how`) 0: nothing; 1: `k[at] = 3x₀` stored; 2: `k[..]`
/// reversed in place; then `z[i] = k[i] · xᵢ` by a loop reading `k`, summed.
#[reverse_diff]
fn changed_between(x: &[f64], #[no_grad] at: usize, #[no_grad] how: usize) -> f64 {
    let n = x.len();
    let mut k = vec![0.0; n];
    for i in 0..n {
        k[i] = x[i] * x[i] + 1.0;
    }
    if how == 1 {
        k[at] = 3.0 * x[0];
    }
    if how == 2 {
        k[..].reverse();
    }
    let mut z = vec![0.0; n];
    for i in 0..n {
        z[i] = k[i] * x[i];
    }
    let mut total = 0.0;
    for i in 0..n {
        total += z[i];
    }
    total
}

/// The gradient of [`changed_between`], by hand.
fn changed_between_gradient(x: &[f64], at: usize, how: usize) -> Vec<f64> {
    let n = x.len();
    let mut gradient: Vec<f64> = x.iter().map(|v| 3.0 * v * v + 1.0).collect();
    if how == 1 {
        // k[at] · x[at] = 3 x₀ x[at] instead of x[at]³ + x[at].
        gradient[at] = 3.0 * x[0];
        gradient[0] += 3.0 * x[at];
    }
    if how == 2 {
        // Σ (x[n-1-i]² + 1) x[i].
        for (j, g) in gradient.iter_mut().enumerate() {
            *g = 2.0 * x[j] * x[n - 1 - j] + x[n - 1 - j] * x[n - 1 - j] + 1.0;
        }
    }
    gradient
}

/// Two loop sums over `k`, whose first element is `x₀`'s node and the others a loop's run: the
/// first sum reads all of `k` (not a run), the second the run only. `2x₀ + 3 Σ xᵢ xᵢ₋₁`.
#[reverse_diff]
fn partly_known(x: &[f64]) -> f64 {
    let n = x.len();
    let mut k = vec![0.0; n];
    k[0] = x[0];
    for i in 1..n {
        k[i] = x[i] * x[i - 1];
    }
    let mut total = 0.0;
    for i in 0..n {
        total += k[i] * 2.0;
    }
    for i in 1..n {
        total += k[i];
    }
    total
}

/// Every mention a held array takes: its length, whether it is empty, a range of it passed to a
/// function, an element read in a closure and in a compound assignment, and the function's
/// value.
#[reverse_diff]
fn mentions(x: &[f64], c: f64) -> Vec<f64> {
    let mut v = vec![0.0; x.len()];
    for i in 0..v.len() {
        v[i] = c * x[i];
    }
    if !v.is_empty() {
        v[0] += head(&v[1..]);
    }
    let at = |i: usize| v[i] * 2.0;
    // Ascribed, so the macro knows `last` is a scalar and the loop below is recorded whole.
    let last: f64 = at(x.len() - 1);
    for i in 0..x.len() {
        v[i] -= last;
    }
    v
}

/// A held array read on a scoped thread (so `Array` is `Send` and `Sync` as a `Vec` is), then
/// named raw (`r#k` is `k`), then moved into a closure that is cloned; and a vector named raw
/// where an array would not do.
#[reverse_diff]
fn shared(x: &[f64]) -> f64 {
    let n = x.len();
    let mut k = vec![0.0; n];
    for i in 0..n {
        k[i] = x[i] * 2.0 + 1.0;
    }
    let first = std::thread::scope(|s| s.spawn(|| k[0] * 2.0).join().unwrap());
    r#k[1] *= first;
    let at = move |i: usize| k[i] * 2.0;
    let again = at.clone();
    // `j` stays a `Vec`: `r#j.iter()` is a mention an array does not take.
    let mut j = vec![1.0; n];
    j[0] = x[0];
    let spread: f64 = r#j.iter().sum();
    at(1) + again(n - 1) + spread
}

/// The sum of squares of `tail`.
#[reverse_diff]
fn head(tail: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..tail.len() {
        total += tail[i] * tail[i];
    }
    total
}

/// Runs `f` on a tape over `values` (term by term when `term_by_term`): the value, the
/// gradient of `Σ wᵢ yᵢ` (`weights`), and the leaves taken as known.
fn on_tape(
    term_by_term: bool,
    values: &[f64],
    weights: &[f64],
    f: impl Fn(&[Var]) -> Vec<Var>,
) -> (Vec<f64>, Vec<f64>, usize) {
    let tape = Tape::new();
    if term_by_term {
        ad::__private::record_term_by_term(&tape);
    }
    let vars: Vec<Var> = values.iter().map(|&v| tape.var(v)).collect();
    let y = f(&vars);
    let total = y
        .iter()
        .zip(weights)
        .fold(Var::constant(0.0), |total, (&y, &w)| total + y * w);
    tape.backward(total);
    let gradient = vars.iter().map(|&v| tape.adjoint(v)).collect();
    let values = y.iter().map(|y| y.value()).collect();
    (values, gradient, ad::__private::known_leaves(&tape))
}

/// The bits of each number, so that comparisons tell -0.0 from 0.0.
/// `heat` takes the runs its loops wrote at three offsets (`u` in each step's first loop, two
/// of whose leaves start past the run's first element, and `next` in the second), where the
/// first step's `u` is the copy's run; bit for bit the term-by-term gradient, and central
/// differences.
#[test]
fn a_stencil_takes_the_runs_at_its_offsets() {
    for (n, steps) in [(34, 1), (50, 4)] {
        let mut inputs: Vec<f64> = (0..n).map(|i| (0.2 * i as f64).sin()).collect();
        inputs.push(0.1);
        let run = |term_by_term: bool| {
            let (values, gradient, known) = on_tape(term_by_term, &inputs, &[1.0], |v| {
                vec![heat::<Var>(&v[..n], v[n], steps)]
            });
            (bits(&values), bits(&gradient), known)
        };
        let (values, gradient, known) = run(false);
        assert_eq!(known, 4 * steps + 1, "n = {n}, steps = {steps}");
        let (values_by_term, gradient_by_term, _) = run(true);
        assert_eq!(values, values_by_term);
        assert_eq!(gradient, gradient_by_term);
        let value = heat_by_hand(&inputs[..n], inputs[n], steps);
        assert_eq!(values, bits(&[value]));
        let plain = |inputs: &[f64]| heat_by_hand(&inputs[..n], inputs[n], steps);
        let gradient: Vec<f64> = gradient.iter().map(|&g| f64::from_bits(g)).collect();
        assert_gradient_matches(plain, &inputs, &gradient, 1e-6);
    }
}

/// An element changed between the loop that wrote `k` and the loop that reads it, by a store or
/// by a range lent mutably: the run is forgotten, and the gradient is the analytic one (taking
/// the run would pass `k[at]`'s adjoint to the node of `x[at]² + 1`).
#[test]
fn an_element_changed_between_loops_is_read_again() {
    let n = 40;
    let x: Vec<f64> = (0..n).map(|i| 0.3 + 0.02 * i as f64).collect();
    for (how, taken) in [(0, 2), (1, 1), (2, 1)] {
        let tape = Tape::new();
        let vars: Vec<Var> = x.iter().map(|&v| tape.var(v)).collect();
        let total = changed_between::<Var>(&vars, 7, how);
        tape.backward(total);
        let gradient: Vec<f64> = vars.iter().map(|&v| tape.adjoint(v)).collect();
        assert_eq!(ad::__private::known_leaves(&tape), taken, "how = {how}");
        for (a, b) in gradient.iter().zip(changed_between_gradient(&x, 7, how)) {
            assert!(
                (a - b).abs() <= 1e-12 * b.abs().max(1.0),
                "how = {how}: {a} against {b}"
            );
        }
        let (value, companion) = changed_between_grad(&x, 7, how);
        assert_eq!(value.to_bits(), total.value().to_bits());
        assert_eq!(bits(&companion), bits(&gradient));
    }
}

/// A loop sum takes what an array knows only when it knows the whole leaf: the sum over all of
/// `partly_known`'s `k` reads it (and runs term by term), the sum over its run takes the run.
#[test]
fn a_loop_sum_takes_a_run_known_whole() {
    let n = 45;
    let x: Vec<f64> = (0..n).map(|i| 1.0 - 0.03 * i as f64).collect();
    let tape = Tape::new();
    let vars: Vec<Var> = x.iter().map(|&v| tape.var(v)).collect();
    let total = partly_known::<Var>(&vars);
    tape.backward(total);
    assert_eq!(ad::__private::known_leaves(&tape), 1);
    for j in 0..n {
        let below = if j >= 1 { x[j - 1] } else { 0.0 };
        let above = if j + 1 < n { x[j + 1] } else { 0.0 };
        let expected = 3.0 * (below + above) + if j == 0 { 2.0 } else { 0.0 };
        let got = tape.adjoint(vars[j]);
        assert!(
            (got - expected).abs() <= 1e-12,
            "{j}: {got} against {expected}"
        );
    }
}

/// Each mention a held array takes compiles and differentiates as written.
#[test]
fn every_mention_of_a_held_array() {
    let x: Vec<f64> = (0..36).map(|i| 0.1 * i as f64 - 1.0).collect();
    let c = 0.7;
    let by_hand = |x: &[f64], c: f64| {
        let mut v: Vec<f64> = x.iter().map(|x| c * x).collect();
        v[0] += v[1..].iter().map(|v| v * v).sum::<f64>();
        let last = v[x.len() - 1] * 2.0;
        v.iter().map(|v| v - last).collect::<Vec<f64>>()
    };
    assert_eq!(bits(&mentions(&x, c)), bits(&by_hand(&x, c)));
    let weights: Vec<f64> = (0..x.len()).map(|i| (i % 5) as f64 - 2.0).collect();
    let mut inputs = x.clone();
    inputs.push(c);
    let (_, gradient, known) = on_tape(false, &inputs, &weights, |v| {
        mentions::<Var>(&v[..v.len() - 1], v[v.len() - 1])
    });
    // `v[0] += …` forgets the run the first loop wrote, so the last loop, recorded whole,
    // reads its own leaf instead of taking that run.
    assert_eq!(known, 0);
    let weighted = |inputs: &[f64]| {
        let (x, c) = inputs.split_at(inputs.len() - 1);
        let y = by_hand(x, c[0]);
        y.iter().zip(&weights).map(|(y, w)| y * w).sum()
    };
    assert_gradient_matches(weighted, &inputs, &gradient, 1e-6);
}

/// What a `Vec` may do, a held array may too: go to a scoped thread, be named raw, be moved
/// into a closure that is cloned (each failed to compile before `Fuse::Known` had every auto
/// trait and `Array` was `Clone`, and `r#k` was taken for another name). Over `f64` only: a
/// `Var` read on another thread panics there, held or not.
#[test]
fn a_held_array_goes_where_a_vec_goes() {
    let x: Vec<f64> = (0..40).map(|i| 0.5 + 0.1 * i as f64).collect();
    let by_hand = |x: &[f64]| {
        let k: Vec<f64> = x.iter().map(|x| x * 2.0 + 1.0).collect();
        let spread = x[0] + (x.len() - 1) as f64;
        k[1] * (k[0] * 2.0) * 2.0 + k[x.len() - 1] * 2.0 + spread
    };
    assert_eq!(shared(&x).to_bits(), by_hand(&x).to_bits());
}

//! Constants lent to the records (`Accumulate::add_scaled`, `ad::__private::lend_constants`):
//! `f_grad`, `f_vjp` and `f_jacobian` lend their `#[no_grad]` slices of `f64` to their tape,
//! and a loop sum of a run of nodes times elements of them (`pre += w[j * n + k] * x[k]`, a
//! perceptron's layer) of 64 terms or more keeps no partial: the sweep reads the constants in
//! place.
//!
//! Checked here: which loops read their partials from the constants
//! (`ad::__private::constants_lent`) and which store them; the value and the gradient bit for
//! bit against the same function with its loops run as written and against `f_pullback`, whose
//! tape is not lent; the gradient against central differences; `-=`, the constant first, what
//! the sum holds before and after the loop, a second loop into the same sum, a held parameter,
//! items of slices, a `&Vec<f64>`, constants the body made (not lent); a panic's message; random
//! lengths; and random programs of such sums over shared weights, each step one of six forms
//! (the lent record's, and the forms beside it that store their partials).

// Index loops are the form a layer is written in.
#![allow(clippy::needless_range_loop)]

mod common;

use ad::reverse_diff;
use common::{assert_gradient_matches, bits, central_derivative, data, expect_panic, STEP};
use proptest::prelude::*;
use std::collections::VecDeque;
use std::ops::Index;

/// `Σⱼ tanh(bⱼ + Σₖ wⱼₖ xₖ)`: a layer's rows, the weights and biases split from one parameter
/// (a slice of `Var`s), the inputs a `#[no_grad]` slice.
#[reverse_diff]
fn layer(weights: &[f64], #[no_grad] inputs: &[f64], n: usize) -> f64 {
    let rows = weights.len() / (n + 1);
    let (w, b) = weights.split_at(rows * n);
    let x = &inputs[..n];
    let mut total = 0.0;
    for j in 0..rows {
        let mut pre = b[j];
        for k in 0..n {
            pre += w[j * n + k] * x[k];
        }
        // Through a `let`: a row's sum read by the next term alone would be kept in the
        // output's record instead (`tests/nested_sums.rs`).
        let activated = pre.tanh();
        total += activated;
    }
    total
}

/// [`layer`] with its inner loop run as written (an attribute keeps a loop from being recorded
/// whole): one record per operation, the reference for its bits.
#[reverse_diff]
fn layer_as_written(weights: &[f64], #[no_grad] inputs: &[f64], n: usize) -> f64 {
    let rows = weights.len() / (n + 1);
    let (w, b) = weights.split_at(rows * n);
    let x = &inputs[..n];
    let mut total = 0.0;
    for j in 0..rows {
        let mut pre = b[j];
        #[allow(clippy::needless_range_loop)]
        for k in 0..n {
            pre += w[j * n + k] * x[k];
        }
        // Through a `let`: a row's sum read by the next term alone would be kept in the
        // output's record instead (`tests/nested_sums.rs`).
        let activated = pre.tanh();
        total += activated;
    }
    total
}

/// Every other form of the sum: `-=` with the constant first, after a term (`pre = b[j] *
/// b[j]`); constants at an offset, of a `&Vec<f64>`, in a loop into a sum the loop over the rows
/// holds (`total`: that loop runs as written); items of slices.
#[allow(clippy::ptr_arg)] // a `&Vec<f64>` is lent too
#[reverse_diff]
fn forms(w: &[f64], b: &[f64], #[no_grad] x: &[f64], #[no_grad] y: &Vec<f64>) -> f64 {
    let n = b.len();
    let mut total = 0.0;
    for j in 0..n {
        let mut pre = b[j] * b[j];
        for k in 0..n {
            pre -= x[k] * w[j * n + k];
        }
        let squared = pre * pre;
        total += squared;
        for k in 0..n {
            total += w[j * n + k] * y[k + 1];
        }
    }
    let mut items = 0.0;
    for (wk, xk) in w[..n].iter().zip(x) {
        items += wk * xk;
    }
    total + items * b[0]
}

/// [`forms`] with its loops run as written.
#[allow(clippy::ptr_arg)] // a `&Vec<f64>` is lent too
#[reverse_diff]
fn forms_as_written(w: &[f64], b: &[f64], #[no_grad] x: &[f64], #[no_grad] y: &Vec<f64>) -> f64 {
    let n = b.len();
    let mut total = 0.0;
    for j in 0..n {
        let mut pre = b[j] * b[j];
        #[allow(clippy::needless_range_loop)]
        for k in 0..n {
            pre -= x[k] * w[j * n + k];
        }
        let squared = pre * pre;
        total += squared;
        #[allow(clippy::needless_range_loop)]
        for k in 0..n {
            total += w[j * n + k] * y[k + 1];
        }
    }
    let mut items = 0.0;
    #[allow(clippy::needless_range_loop)]
    for (wk, xk) in w[..n].iter().zip(x) {
        items += wk * xk;
    }
    total + items * b[0]
}

/// Constants the body made: a local `Vec<f64>`, not lent, so its loops store their partials.
#[reverse_diff]
fn made_here(w: &[f64], #[no_grad] x: &[f64]) -> f64 {
    let doubled: Vec<f64> = x.iter().map(|v| 2.0 * v).collect();
    let mut total = 0.0;
    for k in 0..doubled.len() {
        total += w[k] * doubled[k];
    }
    total * total
}

/// Constants read back to front, whose `AsRef` is their storage front to back.
struct Reversed<'a>(&'a [f64]);

impl Index<usize> for Reversed<'_> {
    type Output = f64;

    fn index(&self, k: usize) -> &f64 {
        &self.0[self.0.len() - 1 - k]
    }
}

impl AsRef<[f64]> for Reversed<'_> {
    fn as_ref(&self) -> &[f64] {
        self.0
    }
}

/// A `let` in a macro's expansion, out of `#[reverse_diff]`'s sight.
macro_rules! rebind {
    ($name:ident = $value:expr) => {
        let $name = $value;
    };
}

/// `x` bound again where the macro cannot see, to constants whose indexing is not a slice's,
/// then to a `VecDeque`: the loops must read what `x[k]` reads, so they store their partials.
#[reverse_diff]
fn rebound(w: &[f64], #[no_grad] x: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    {
        rebind!(x = Reversed(x));
        for k in 0..n {
            total += w[k] * x[k];
        }
    }
    rebind!(x = x.iter().map(|v| 2.0 * v).collect::<VecDeque<f64>>());
    for k in 0..n {
        total += w[k] * x[k];
    }
    total * total
}

/// A user's type named `Vec`, indexed back to front.
mod user {
    /// Values indexed back to front.
    pub struct Vec<T>(pub std::vec::Vec<T>);

    impl std::ops::Index<usize> for Vec<f64> {
        type Output = f64;

        fn index(&self, k: usize) -> &f64 {
            &self.0[self.0.len() - 1 - k]
        }
    }
}

/// A `#[no_grad]` parameter of a user's type named `Vec`: not lent, its loop not either.
#[reverse_diff]
fn users_vec(w: &[f64], #[no_grad] x: &user::Vec<f64>) -> f64 {
    let mut total = 0.0;
    for k in 0..w.len() {
        total += w[k] * x[k];
    }
    total * total
}

/// A loop whose constants end before its range does: it runs as written, and panics there.
#[reverse_diff]
fn past_the_end(w: &[f64], #[no_grad] x: &[f64]) -> f64 {
    let mut total = 0.0;
    for k in 0..w.len() {
        total += w[k] * x[k];
    }
    total
}

/// `gradient` along a few directions against central differences of `f` (relative
/// tolerance 1e-6): a check of many inputs in a few calls.
fn assert_directions_match(f: impl Fn(&[f64]) -> f64, x: &[f64], gradient: &[f64]) {
    for seed in [0.5, 1.5, 2.5] {
        let direction = data(x.len(), seed);
        let along = |h: f64| {
            let moved: Vec<f64> = x.iter().zip(&direction).map(|(x, d)| x + h * d).collect();
            f(&moved)
        };
        let expected = central_derivative(along, 0.0, STEP);
        let got: f64 = gradient.iter().zip(&direction).map(|(g, d)| g * d).sum();
        let scale = expected.abs().max(1.0);
        assert!(
            (got - expected).abs() <= 1e-6 * scale,
            "{got} against {expected}"
        );
    }
}

/// Runs `grad`, and says how many loop sums read their partials from lent constants.
fn lent_by<R>(grad: impl FnOnce() -> R) -> (R, usize) {
    let before = ad::__private::constants_lent();
    let result = grad();
    (result, ad::__private::constants_lent() - before)
}

/// A layer of `rows` rows of `n` inputs: its weights then biases, and its inputs.
fn layer_data(rows: usize, n: usize) -> (Vec<f64>, Vec<f64>) {
    (data(rows * (n + 1), 3.0), data(n + 2, 7.0))
}

#[test]
fn a_layer_reads_its_partials_from_the_inputs_from_64_terms_on() {
    for (n, rows) in [(16, 5), (63, 3), (64, 3), (200, 2)] {
        let (weights, inputs) = layer_data(rows, n);
        let ((value, gradient), lent) = lent_by(|| layer_grad(&weights, &inputs, n));
        assert_eq!(lent, if n >= 64 { rows } else { 0 }, "n = {n}");
        let (written, written_gradient) = layer_as_written_grad(&weights, &inputs, n);
        assert_eq!(value.to_bits(), written.to_bits(), "n = {n}");
        assert_eq!(bits(&gradient), bits(&written_gradient), "n = {n}");
        assert_eq!(value.to_bits(), layer(&weights, &inputs, n).to_bits());
        let ((pulled, pullback), lent) = lent_by(|| layer_pullback(&weights, &inputs, n));
        assert_eq!((pulled.to_bits(), lent), (value.to_bits(), 0));
        assert_eq!(bits(&pullback.pull(&1.0)), bits(&gradient), "n = {n}");
        assert_gradient_matches(|w| layer(w, &inputs, n), &weights, &gradient, 1e-6);
    }
}

#[test]
fn the_other_companions_lend_their_constants_too() {
    let (n, rows) = (100, 3);
    let (weights, inputs) = layer_data(rows, n);
    let (_, gradient) = layer_grad(&weights, &inputs, n);
    let ((value, pulled), lent) = lent_by(|| layer_vjp(&weights, &inputs, n, &-2.0));
    assert_eq!((value, lent), (layer(&weights, &inputs, n), rows));
    let doubled: Vec<u64> = gradient.iter().map(|g| (-2.0 * g).to_bits()).collect();
    assert_eq!(bits(&pulled), doubled);
    let ((_, jacobian), lent) = lent_by(|| layer_jacobian(&weights, &inputs, n));
    assert_eq!(lent, rows);
    assert_eq!(jacobian.len(), 1);
    assert_eq!(bits(&jacobian[0]), bits(&gradient));
}

#[test]
fn every_form_of_the_sum_gives_the_bits_of_its_loops_as_written() {
    for n in [10, 64, 90] {
        let (w, b, x, y) = (
            data(n * n, 1.0),
            data(n, 2.0),
            data(n, 4.0),
            data(n + 1, 5.0),
        );
        let ((value, (gw, gb)), lent) = lent_by(|| forms_grad(&w, &b, &x, &y));
        // From 64 terms, each row's `-=` and the items' loop.
        assert_eq!(lent, if n >= 64 { n + 1 } else { 0 }, "n = {n}");
        let (written, (ww, wb)) = forms_as_written_grad(&w, &b, &x, &y);
        assert_eq!(value.to_bits(), written.to_bits(), "n = {n}");
        assert_eq!((bits(&gw), bits(&gb)), (bits(&ww), bits(&wb)), "n = {n}");
        assert_eq!(value.to_bits(), forms(&w, &b, &x, &y).to_bits());
        let all = [&w[..], &b[..]].concat();
        let split = |all: &[f64]| forms(&all[..n * n], &all[n * n..], &x, &y);
        assert_directions_match(split, &all, &[gw, gb].concat());
    }
}

#[test]
fn constants_the_body_made_are_not_lent() {
    let (w, x) = (data(100, 1.0), data(100, 2.0));
    let ((value, gradient), lent) = lent_by(|| made_here_grad(&w, &x));
    assert_eq!((value.to_bits(), lent), (made_here(&w, &x).to_bits(), 0));
    assert_gradient_matches(|w| made_here(w, &x), &w, &gradient, 1e-6);
}

#[test]
fn constants_whose_indexing_is_not_a_slice_s_are_not_lent() {
    let (w, x) = (data(100, 1.0), data(100, 2.0));
    let ((value, gradient), lent) = lent_by(|| rebound_grad(&w, &x));
    assert_eq!((value.to_bits(), lent), (rebound(&w, &x).to_bits(), 0));
    assert_gradient_matches(|w| rebound(w, &x), &w, &gradient, 1e-6);
    let x = user::Vec(x);
    let ((value, gradient), lent) = lent_by(|| users_vec_grad(&w, &x));
    assert_eq!((value.to_bits(), lent), (users_vec(&w, &x).to_bits(), 0));
    assert_gradient_matches(|w| users_vec(w, &x), &w, &gradient, 1e-6);
}

#[test]
fn constants_that_end_too_soon_panic_as_the_function_does() {
    let (w, x) = (data(100, 1.0), data(99, 2.0));
    let plain = expect_panic(|| past_the_end(&w, &x));
    assert_eq!(
        plain,
        "index out of bounds: the len is 99 but the index is 99"
    );
    let (message, lent) = lent_by(|| expect_panic(|| past_the_end_grad(&w, &x)));
    assert_eq!((message, lent), (plain, 0));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Random widths on both sides of 64 and random data: the bits of the loops as written.
    #[test]
    fn random_layers_give_the_bits_of_their_loops_as_written(
        n in 1usize..160,
        rows in 1usize..4,
        seed in 0.0f64..10.0,
    ) {
        let weights = data(rows * (n + 1), seed);
        let inputs = data(n, seed + 1.0);
        let ((value, gradient), lent) = lent_by(|| layer_grad(&weights, &inputs, n));
        prop_assert_eq!(lent, if n >= 64 { rows } else { 0 });
        let (written, written_gradient) = layer_as_written_grad(&weights, &inputs, n);
        prop_assert_eq!(value.to_bits(), written.to_bits());
        prop_assert_eq!(bits(&gradient), bits(&written_gradient));
    }
}

// --- random programs ----------------------------------------------------------------------------

/// The size of [`program`]'s weights and of its constants: every step's ranges lie within.
const PROGRAM_WEIGHTS: usize = 400;
/// See [`PROGRAM_WEIGHTS`].
const PROGRAM_CONSTANTS: usize = 300;

/// A program of steps, each `[kind, w's offset, x's offset, length]` in `plan`, each a sum
/// that starts at a weight (or at nothing) and adds a loop over a run of the weights times the
/// constants, in one of six forms: `+=`; `-=` with the constant first; after a product held
/// before the loop; two loops into one sum, the second over the same weights at other constants
/// (the sum keeps one lent loop at most); a term of neighbours (`w[k] · x[k] + w[k + 1] ·
/// x[k]`, not a scaled term: stored partials); and a loop whose term is not leaf times
/// constant (`w[k] · w[k] · x[k]`). The steps' results meet in a running total through `sin`
/// and products, so each reaches the gradient with its own weight.
#[reverse_diff]
fn program(w: &[f64], #[no_grad] x: &[f64], #[no_grad] plan: &[[usize; 4]]) -> f64 {
    let mut total = 0.25;
    for step in plan {
        let [kind, a, c, n] = *step;
        let mut pre = 0.0;
        match kind {
            0 => {
                pre = w[a];
                for k in 0..n {
                    pre += w[a + k] * x[c + k];
                }
            }
            1 => {
                for k in 0..n {
                    pre -= x[c + k] * w[a + k];
                }
            }
            2 => {
                pre = w[a] * w[a + n];
                for k in 0..n {
                    pre += w[a + k] * x[c + k];
                }
            }
            3 => {
                for k in 0..n {
                    pre += w[a + k] * x[c + k];
                }
                for k in 0..n {
                    pre -= w[a + k] * x[c + n - k];
                }
            }
            4 => {
                for k in 0..n {
                    pre += w[a + k] * x[c + k] + w[a + k + 1] * x[c + k];
                }
            }
            _ => {
                for k in 0..n {
                    pre += w[a + k] * w[a + k] * x[c + k];
                }
            }
        }
        total = total * 0.5 + (pre * 0.1).sin();
    }
    total
}

/// [`program`] with its loops run as written.
#[reverse_diff]
fn program_as_written(w: &[f64], #[no_grad] x: &[f64], #[no_grad] plan: &[[usize; 4]]) -> f64 {
    let mut total = 0.25;
    for step in plan {
        let [kind, a, c, n] = *step;
        let mut pre = 0.0;
        match kind {
            0 => {
                pre = w[a];
                #[allow(clippy::needless_range_loop)]
                for k in 0..n {
                    pre += w[a + k] * x[c + k];
                }
            }
            1 =>
            {
                #[allow(clippy::needless_range_loop)]
                for k in 0..n {
                    pre -= x[c + k] * w[a + k];
                }
            }
            2 => {
                pre = w[a] * w[a + n];
                #[allow(clippy::needless_range_loop)]
                for k in 0..n {
                    pre += w[a + k] * x[c + k];
                }
            }
            3 => {
                #[allow(clippy::needless_range_loop)]
                for k in 0..n {
                    pre += w[a + k] * x[c + k];
                }
                #[allow(clippy::needless_range_loop)]
                for k in 0..n {
                    pre -= w[a + k] * x[c + n - k];
                }
            }
            4 =>
            {
                #[allow(clippy::needless_range_loop)]
                for k in 0..n {
                    pre += w[a + k] * x[c + k] + w[a + k + 1] * x[c + k];
                }
            }
            _ =>
            {
                #[allow(clippy::needless_range_loop)]
                for k in 0..n {
                    pre += w[a + k] * w[a + k] * x[c + k];
                }
            }
        }
        total = total * 0.5 + (pre * 0.1).sin();
    }
    total
}

/// How many loops of `plan` read their partials from the constants: the first loop of each
/// step of the forms that have a scaled term, from 64 terms.
fn lent_loops(plan: &[[usize; 4]]) -> usize {
    let scaled = |&[kind, .., n]: &[usize; 4]| kind <= 3 && n >= 64;
    plan.iter().filter(|step| scaled(step)).count()
}

/// A step of [`program`]: its kind, and a length on both sides of 64 with offsets that keep
/// every index it reads within the weights and the constants.
fn step() -> impl Strategy<Value = [usize; 4]> {
    (0usize..6, 0usize..160).prop_flat_map(|(kind, n)| {
        let reach = n + 1; // `w[a + n]` and `x[c + n]` are the furthest reads
        (
            Just(kind),
            0..PROGRAM_WEIGHTS - reach,
            0..PROGRAM_CONSTANTS - reach,
            Just(n),
        )
            .prop_map(|(kind, a, c, n)| [kind, a, c, n])
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random programs of 1 to 6 steps over shared weights (steps may read overlapping runs of
    /// them): the value and the gradient bit for bit against the loops as written and against
    /// `f_pullback` (a tape not lent); the lent loops counted; the gradient against central
    /// differences along a few directions.
    #[test]
    fn random_programs_give_the_bits_of_their_loops_as_written(
        plan in prop::collection::vec(step(), 1..7),
        seed in 0.0f64..10.0,
    ) {
        let (w, x) = (data(PROGRAM_WEIGHTS, seed), data(PROGRAM_CONSTANTS, seed + 1.0));
        let ((value, gradient), lent) = lent_by(|| program_grad(&w, &x, &plan));
        prop_assert_eq!(lent, lent_loops(&plan));
        prop_assert_eq!(value.to_bits(), program(&w, &x, &plan).to_bits());
        let (written, written_gradient) = program_as_written_grad(&w, &x, &plan);
        prop_assert_eq!(value.to_bits(), written.to_bits());
        prop_assert_eq!(bits(&gradient), bits(&written_gradient));
        let (pulled, pullback) = program_pullback(&w, &x, &plan);
        prop_assert_eq!(pulled.to_bits(), value.to_bits());
        prop_assert_eq!(bits(&pullback.pull(&1.0)), bits(&gradient));
        assert_directions_match(|w| program(w, &x, &plan), &w, &gradient);
    }
}

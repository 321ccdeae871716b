//! Parameters held as values (`ad-macro/src/fuse/arrays.rs`, `held_parameters`): a `&[f64]`
//! parameter whose every mention is an element read or its length is seeded by `f_grad`,
//! `f_vjp` and `f_jacobian` as `ad::__private::Values`, its nodes reserved and no `Var`
//! written; an element read builds its `Var` from the value, a loop sum recorded whole reads the
//! `f64`s, and a loop that writes elements reads the `Var`s, built once.
//!
//! Checked here: that the parameters are held (`ad::__private::seeded_as_values`) where every
//! mention allows it, and not otherwise; the value and the gradient bit for bit against
//! `f_pullback`, which seeds a slice of `Var`s and runs the same body; the gradient against
//! central differences; a panic's message against the function's own over `f64`; the companions
//! over another scalar (a derivative of the gradient); random lengths and offsets.

// Index loops are the form held parameters are read in.
#![allow(clippy::needless_range_loop)]

mod common;

use ad::reverse_diff;
use common::{assert_gradient_matches, bits, data, expect_panic};
use proptest::prelude::*;

/// `Σ xᵢ yᵢ`: a loop sum over two held parameters, recorded whole.
#[reverse_diff]
fn dot(x: &[f64], y: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += x[i] * y[i];
    }
    total
}

/// Rosenbrock's function: neighbours (`x[i]`, `x[i + 1]`) of one held parameter.
#[reverse_diff]
fn rosenbrock(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() - 1 {
        let d = x[i + 1] - x[i] * x[i];
        let e = 1.0 - x[i];
        total += 100.0 * (d * d) + e * e;
    }
    total
}

/// `Σᵢ Σⱼ aᵢⱼ xⱼ`: a row of `a` at an offset, times `x`, in nested loops.
#[reverse_diff]
fn matvec_sum(a: &[f64], x: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    for i in 0..n {
        let mut row = 0.0;
        for j in 0..n {
            row += a[i * n + j] * x[j];
        }
        total += row;
    }
    total
}

/// Every other way a held parameter is read: elements outside loops (`x[0]`), a loop too
/// short to record whole (4 terms), a loop sum under `-=` reading a parameter not held (`w`,
/// iterated), an element loop (`z[i] = ..`, which reads `x` as `Var`s), a closure, and
/// `is_empty`.
#[reverse_diff]
fn mixed(x: &[f64], w: &[f64], c: f64) -> f64 {
    if x.is_empty() {
        return c;
    }
    let n = x.len();
    let mut head = x[0] * c;
    for i in 0..4 {
        head += x[i] * x[i + 1];
    }
    let mut total = head;
    for (i, wi) in w.iter().enumerate() {
        total -= wi * x[i] / (x[i + 1] * x[i + 1] + 1.0);
    }
    let mut z = vec![0.0; n];
    for i in 0..n {
        z[i] = x[i] * c - x[n - 1 - i];
    }
    let scaled = |i: usize| x[i] * 0.5 + z[i];
    let mut last = 0.0;
    for i in 0..n {
        last += scaled(i).sin();
    }
    total + last
}

/// Loop sums of products of two held parameters, whose records read their partials from the
/// parameters (`ad::__private::products_lent`) when long (64 terms or more) and the first loop
/// of their sum: elements at the same place, the same parameter at neighbouring places under
/// `-=` (`a[i + 1] * a[i]`: two runs that overlap), and a sum that holds a term before each of
/// its two loops (`late`: `a[0] · 2`, then what the first loop left).
#[reverse_diff]
fn products(a: &[f64], b: &[f64]) -> f64 {
    let n = b.len();
    let mut total = 0.0;
    for i in 0..n {
        total += a[i] * b[i];
    }
    let mut back = 0.0;
    for i in 0..n - 1 {
        back -= a[i + 1] * a[i];
    }
    let mut late = a[0] * 2.0;
    for i in 0..n {
        late += b[i] * a[i + 1];
    }
    for i in 0..n {
        late += a[i] * b[i];
    }
    total * 0.5 + back * late
}

/// Two sums of products as a vector result: `f_jacobian` sweeps the records that read the
/// parameters once per output.
#[reverse_diff]
fn two_products(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut first = 0.0;
    let mut second = 0.0;
    for i in 0..b.len() {
        first += a[i] * b[i];
    }
    for i in 0..b.len() {
        second -= b[i] * a[i + 1];
    }
    vec![first * first, second]
}

/// `(Σ xᵢ, Σ xᵢ²)`: a vector result over one held parameter, whose rows of `f_jacobian` each
/// sweep the tape again after the last row took the adjoints' buffer.
#[reverse_diff]
fn moments(x: &[f64]) -> Vec<f64> {
    let mut sum = 0.0;
    let mut squares = 0.0;
    for i in 0..x.len() {
        sum += x[i];
    }
    for i in 0..x.len() {
        squares += x[i] * x[i];
    }
    vec![sum, squares]
}

/// Sums that hold a term before their loop: an affine map's rows `b[i] + Σⱼ a[i·n + j] x[j]`
/// (a loop of products after `b[i]`), `x[0]` then a loop of products reading `x[0]` again
/// (under `-=`: two additions to one adjoint, whose order the bits tell), and `x[1]` then a loop
/// whose partials are stored (`x[j].sin() · a[j + 1]`). Recorded whole, each keeps what it held
/// before the loop and sweeps it first.
#[reverse_diff]
fn affine(a: &[f64], x: &[f64], b: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    for i in 0..b.len() {
        let mut row = b[i];
        for j in 0..n {
            row += a[i * n + j] * x[j];
        }
        total += row * row;
    }
    let mut shared = x[0];
    for j in 0..n {
        shared -= x[j] * a[j];
    }
    let mut stored = x[1];
    for j in 0..n {
        stored += x[j].sin() * a[j + 1];
    }
    total + shared * stored
}

/// [`affine`] with its inner loops run as written (an attribute keeps a loop from being
/// recorded whole): one record per operation, the reference for its bits.
#[reverse_diff]
fn affine_as_written(a: &[f64], x: &[f64], b: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    for i in 0..b.len() {
        let mut row = b[i];
        #[allow(clippy::needless_range_loop)]
        for j in 0..n {
            row += a[i * n + j] * x[j];
        }
        total += row * row;
    }
    let mut shared = x[0];
    #[allow(clippy::needless_range_loop)]
    for j in 0..n {
        shared -= x[j] * a[j];
    }
    let mut stored = x[1];
    #[allow(clippy::needless_range_loop)]
    for j in 0..n {
        stored += x[j].sin() * a[j + 1];
    }
    total + shared * stored
}

/// A held parameter read past its end inside a loop recorded whole (`x[i + 1]` at the last
/// `i`): the loop runs as written and panics where the function does.
#[reverse_diff]
fn past_the_end(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += x[i] * x[i + 1];
    }
    total
}

/// A vector result over a held parameter: `f_vjp` and `f_jacobian` hold it too.
#[reverse_diff]
fn differences(x: &[f64], c: f64) -> Vec<f64> {
    let n = x.len();
    let mut out = vec![0.0; n - 1];
    for i in 0..n - 1 {
        out[i] = (x[i + 1] - x[i]) * c;
    }
    out
}

/// A parameter not held: passed on (`dot(x, x)`), sliced and iterated.
#[reverse_diff]
fn not_held(x: &[f64]) -> f64 {
    let tail = &x[1..];
    let total: f64 = tail.iter().map(|v| v * v).sum();
    total + dot(x, x)
}

/// The gradient of [`dot`] differentiated again: `dot_grad` over the caller's scalar.
#[reverse_diff]
fn gradient_norm(x: &[f64], y: &[f64]) -> f64 {
    let (_, (gx, gy)) = dot_grad(x, y);
    let mut total = 0.0;
    for i in 0..gx.len() {
        total += gx[i] * gx[i] + gy[i];
    }
    total
}

/// An element borrowed past its statement (`best = &x[i]`): not held, since a value read
/// could not be borrowed so.
#[reverse_diff]
fn largest_doubled(x: &[f64]) -> f64 {
    let mut best = &x[0];
    for i in 1..x.len() {
        if x[i] > *best {
            best = &x[i];
        }
    }
    *best * 2.0
}

/// A closure returning a borrowed element: not held.
#[reverse_diff]
fn borrowed_sum(x: &[f64]) -> f64 {
    let at = |i: usize| &x[i];
    let mut total = 0.0;
    for i in 0..x.len() {
        total += *at(i) * 2.0;
    }
    total
}

/// An index that is a range kept in a variable: not held, since only an element can be read
/// by value.
#[reverse_diff]
fn ranged(x: &[f64]) -> f64 {
    let r = 1..3;
    let middle: f64 = x[r].iter().sum();
    middle * x[0]
}

/// A held parameter read on another thread (its length): held, as a `&[Var]` could be.
#[reverse_diff]
fn scoped(x: &[f64]) -> f64 {
    let n = x.len();
    let twice = std::thread::scope(|s| s.spawn(|| x.len() * 2).join().unwrap());
    twice as f64 * x[0] + x[n - 1]
}

/// Runs `grad`, and says how many parameters it seeded as values.
/// A perceptron's weights laid out in one parameter and split into its layers, as
/// `split_at` splits a slice: the halves are held as the parameter is. Rows of `w1` times the
/// constant inputs (a loop sum recorded whole), `b1` and `w2` read by element, `b2` split off
/// last and `_` for a half not needed.
#[reverse_diff]
fn layered(weights: &[f64], #[no_grad] inputs: &[f64], hidden: usize) -> f64 {
    let n = inputs.len();
    let (w1, rest) = weights.split_at(hidden * n);
    let (b1, rest) = rest.split_at(hidden);
    let (w2, rest) = rest.split_at(hidden);
    let (b2, _) = rest.split_at(1);
    let mut output = b2[0];
    for j in 0..hidden {
        let mut pre = b1[j];
        for k in 0..n {
            pre += w1[j * n + k] * inputs[k];
        }
        output += w2[j] * pre.tanh();
    }
    output * output + w1.len() as f64
}

/// As [`layered`], a half iterated: the parameter stays a slice of `Var`s.
#[reverse_diff]
fn layered_iterated(weights: &[f64], #[no_grad] inputs: &[f64]) -> f64 {
    let (w, rest) = weights.split_at(inputs.len());
    let mut total = rest[0];
    for (wk, xk) in w.iter().zip(inputs) {
        total += wk * xk;
    }
    total * total
}

/// A half named as another parameter: the parameter stays a slice of `Var`s, and `scale`
/// keeps its meaning before the `let`.
#[reverse_diff]
fn shadowing(x: &[f64], #[no_grad] scale: &[f64]) -> f64 {
    let first = x[0] * scale[0];
    let (scale, tail) = x.split_at(1);
    first + scale[0] * tail[0]
}

/// Ranges as indices, where the macro cannot tell them from integers by their form: a loop
/// over an array of ranges, a range a function returns, ranges in constant data. The slice and
/// its halves stay slices of `Var`s, and compile as they did.
fn second_pair() -> std::ops::Range<usize> {
    2..4
}

#[reverse_diff]
fn ranged_indices(x: &[f64], #[no_grad] spans: &[std::ops::RangeTo<usize>]) -> f64 {
    let mut total = 0.0;
    for r in [0..2, 2..4] {
        total += x[r][1];
    }
    let (a, b) = x.split_at(4);
    let r = second_pair();
    total += a[r][0] * b[0];
    for k in 0..spans.len() {
        total += a[spans[k]][0];
    }
    total
}

/// Indices the macro knows to be integers without a loop of its own: a mapped sum's variable
/// over a range, and an element of an integer parameter (a gather). The halves are held.
#[reverse_diff]
fn gathered(x: &[f64], #[no_grad] idx: &[usize]) -> f64 {
    let (a, b) = x.split_at(x.len() / 2);
    let products = (0..a.len()).map(|i| a[i] * b[i]).sum::<f64>();
    let mut picked = 0.0;
    for k in 0..idx.len() {
        picked += a[idx[k]] * b[idx[k]];
    }
    products + picked
}

/// A split past the end, which panics as the slice's `split_at` does.
#[reverse_diff]
fn split_past_the_end(x: &[f64], mid: usize) -> f64 {
    let (head, tail) = x.split_at(mid);
    head[0] + tail.len() as f64
}

fn held_by<R>(grad: impl FnOnce() -> R) -> (R, usize) {
    let before = ad::__private::seeded_as_values();
    let result = grad();
    (result, ad::__private::seeded_as_values() - before)
}

#[test]
fn loop_sums_over_held_parameters_agree_with_slices_of_vars() {
    // The tape's companions, which this test is about (the macro writes the adjoints of
    // some of these bodies out: tests/written_adjoints.rs).
    ad::__private::set_generated_adjoints(false);
    for n in [3, 9, 128, 301] {
        let (x, y) = (data(n, 0.0), data(n, 1.0));
        let ((value, (gx, gy)), held) = held_by(|| dot_grad(&x, &y));
        assert_eq!(held, 2);
        let (pulled, pullback) = dot_pullback(&x, &y);
        let (px, py) = pullback.pull(&1.0);
        assert_eq!(value.to_bits(), pulled.to_bits());
        assert_eq!((bits(&gx), bits(&gy)), (bits(&px), bits(&py)));
        assert_eq!(value.to_bits(), dot(&x, &y).to_bits());
        assert_eq!((bits(&gx), bits(&gy)), (bits(&y), bits(&x)));

        let ((value, gradient), held) = held_by(|| rosenbrock_grad(&x));
        assert_eq!(held, 1);
        let (pulled, pullback) = rosenbrock_pullback(&x);
        assert_eq!(value.to_bits(), pulled.to_bits());
        assert_eq!(bits(&gradient), bits(&pullback.pull(&1.0)));
        assert_gradient_matches(rosenbrock, &x, &gradient, 1e-6);
    }
    for n in [4, 12, 40] {
        let (a, x) = (data(n * n, 2.0), data(n, 3.0));
        let ((value, (ga, gx)), held) = held_by(|| matvec_sum_grad(&a, &x));
        assert_eq!(held, 2);
        let (pulled, pullback) = matvec_sum_pullback(&a, &x);
        let (pa, px) = pullback.pull(&1.0);
        assert_eq!(value.to_bits(), pulled.to_bits());
        assert_eq!((bits(&ga), bits(&gx)), (bits(&pa), bits(&px)));
        // ∂/∂aᵢⱼ = xⱼ, ∂/∂xⱼ = Σᵢ aᵢⱼ.
        for i in 0..n {
            assert_eq!(bits(&ga[i * n..(i + 1) * n]), bits(&x));
        }
        for j in 0..n {
            let column: f64 = (0..n).map(|i| a[i * n + j]).sum();
            assert!(
                (gx[j] - column).abs() <= 1e-12,
                "{} against {column}",
                gx[j]
            );
        }
    }
}

#[test]
fn every_read_of_a_held_parameter_agrees_with_slices_of_vars() {
    for n in [6, 40, 131] {
        let (x, w) = (data(n, 4.0), data(n - 1, 5.0));
        let c = 0.7;
        let ((value, (gx, gw, gc)), held) = held_by(|| mixed_grad(&x, &w, c));
        // `x` alone: `w` is iterated.
        assert_eq!(held, 1);
        let (pulled, pullback) = mixed_pullback(&x, &w, c);
        let (px, pw, pc) = pullback.pull(&1.0);
        assert_eq!(value.to_bits(), pulled.to_bits());
        assert_eq!(value.to_bits(), mixed(&x, &w, c).to_bits());
        assert_eq!(
            (bits(&gx), bits(&gw), gc.to_bits()),
            (bits(&px), bits(&pw), pc.to_bits())
        );
        let inputs: Vec<f64> = x.iter().chain(&w).chain([&c]).copied().collect();
        let gradient: Vec<f64> = gx.iter().chain(&gw).chain([&gc]).copied().collect();
        let f = |v: &[f64]| mixed(&v[..n], &v[n..2 * n - 1], v[2 * n - 1]);
        assert_gradient_matches(f, &inputs, &gradient, 1e-6);
    }
    // `x.is_empty()`.
    let ((value, (gx, gw, gc)), held) = held_by(|| mixed_grad(&[], &[], 2.5));
    assert_eq!((value, gx, gw, gc, held), (2.5, vec![], vec![], 1.0, 1));
}

#[test]
fn vector_results_hold_their_parameters_in_vjp_and_jacobian() {
    // The tape's companions, which this test is about (the macro writes the adjoints of
    // some of these bodies out: tests/written_adjoints.rs).
    ad::__private::set_generated_adjoints(false);
    let (x, c) = (data(50, 6.0), 1.5);
    let cotangent = data(49, 7.0);
    let ((value, (gx, gc)), held) = held_by(|| differences_vjp(&x, c, &cotangent));
    assert_eq!(held, 1);
    let (pulled, pullback) = differences_pullback(&x, c);
    let (px, pc) = pullback.pull(&cotangent);
    assert_eq!(
        (bits(&value), bits(&gx), gc.to_bits()),
        (bits(&pulled), bits(&px), pc.to_bits())
    );
    let ((rows_value, rows), held) = held_by(|| differences_jacobian(&x, c));
    assert_eq!(held, 1);
    assert_eq!(bits(&rows_value), bits(&value));
    for (i, (row_x, row_c)) in rows.iter().enumerate() {
        let expected: Vec<f64> = (0..50)
            .map(|j| match j {
                _ if j == i => -c,
                _ if j == i + 1 => c,
                _ => 0.0,
            })
            .collect();
        assert_eq!(bits(row_x), bits(&expected));
        assert_eq!(row_c.to_bits(), (x[i + 1] - x[i]).to_bits());
    }
}

#[test]
fn a_parameter_mentioned_otherwise_stays_a_slice_of_vars() {
    let x = data(40, 8.0);
    let ((value, gradient), held) = held_by(|| not_held_grad(&x));
    assert_eq!(held, 0);
    assert_eq!(value.to_bits(), not_held(&x).to_bits());
    assert_gradient_matches(not_held, &x, &gradient, 1e-6);
}

#[test]
fn borrowed_elements_ranges_and_threads_compile_as_before() {
    // The tape's companions, which this test is about (the macro writes the adjoints of
    // some of these bodies out: tests/written_adjoints.rs).
    ad::__private::set_generated_adjoints(false);
    let x = data(40, 12.0);
    let ((value, gradient), held) = held_by(|| largest_doubled_grad(&x));
    let at = (0..40).fold(0, |best, i| if x[i] > x[best] { i } else { best });
    assert_eq!((value, held), (2.0 * x[at], 0));
    assert!(gradient
        .iter()
        .enumerate()
        .all(|(i, &g)| g == if i == at { 2.0 } else { 0.0 }));
    let ((value, gradient), held) = held_by(|| borrowed_sum_grad(&x));
    assert_eq!((value, held), (borrowed_sum(&x), 0));
    assert!(gradient.iter().all(|&g| g == 2.0));
    let ((value, gradient), held) = held_by(|| ranged_grad(&x));
    assert_eq!((value, held), (ranged(&x), 0));
    assert_eq!(&gradient[..4], &[x[1] + x[2], x[0], x[0], 0.0]);
    let ((value, gradient), held) = held_by(|| scoped_grad(&x));
    assert_eq!((value, held), (80.0 * x[0] + x[39], 1));
    assert_eq!((gradient[0], gradient[39], gradient[1]), (80.0, 1.0, 0.0));
}

#[test]
fn a_held_parameter_read_past_its_end_panics_as_the_function_does() {
    // The tape's companions, which this test is about (the macro writes the adjoints of
    // some of these bodies out: tests/written_adjoints.rs).
    ad::__private::set_generated_adjoints(false);
    // 100: long enough for a loop of products to read its partials from the parameter.
    for n in [20, 100] {
        let x = data(n, 9.0);
        let plain = expect_panic(|| past_the_end(&x));
        assert_eq!(
            plain,
            format!("index out of bounds: the len is {n} but the index is {n}")
        );
        let before = ad::__private::products_lent();
        let (message, held) = held_by(|| expect_panic(|| past_the_end_grad(&x)));
        assert_eq!((message, held), (plain, 1));
        assert_eq!(ad::__private::products_lent(), before);
    }
}

/// Runs `grad`, and says how many loops of products read their partials from the parameters.
fn lent_by<R>(grad: impl FnOnce() -> R) -> (R, usize) {
    let before = ad::__private::products_lent();
    let result = grad();
    (result, ad::__private::products_lent() - before)
}

#[test]
fn loops_of_products_read_their_partials_from_the_parameters() {
    // The tape's companions, which this test is about (the macro writes the adjoints of
    // some of these bodies out: tests/written_adjoints.rs).
    ad::__private::set_generated_adjoints(false);
    // Below 64 terms the loops store their partials; from 64, `total`, `back` and both of
    // `late`'s read them from `a` and `b`, and so do both sums of `two_products`.
    for (n, lent, two) in [(20, 0, 0), (63, 0, 0), (65, 4, 2), (200, 4, 2)] {
        let (a, b) = (data(n + 1, 12.0), data(n, 13.0));
        let ((value, (ga, gb)), counted) = lent_by(|| products_grad(&a, &b));
        assert_eq!(counted, lent, "n = {n}");
        let (pulled, pullback) = products_pullback(&a, &b);
        let (pa, pb) = pullback.pull(&1.0);
        assert_eq!(value.to_bits(), pulled.to_bits());
        assert_eq!((bits(&ga), bits(&gb)), (bits(&pa), bits(&pb)));
        assert_eq!(value.to_bits(), products(&a, &b).to_bits());
        assert_gradient_matches(|a| products(a, &b), &a, &ga, 1e-6);
        assert_gradient_matches(|b| products(&a, b), &b, &gb, 1e-6);

        let cotangent = vec![0.75, -1.5];
        let ((value, (ja, jb)), counted) = lent_by(|| two_products_vjp(&a, &b, &cotangent));
        assert_eq!(counted, two, "n = {n}");
        let (pulled, pullback) = two_products_pullback(&a, &b);
        let (pa, pb) = pullback.pull(&cotangent);
        assert_eq!(bits(&value), bits(&pulled));
        assert_eq!((bits(&ja), bits(&jb)), (bits(&pa), bits(&pb)));
        let ((value, rows), counted) = lent_by(|| two_products_jacobian(&a, &b));
        assert_eq!(counted, two, "n = {n}");
        assert_eq!(bits(&value), bits(&pulled));
        for (output, (ra, rb)) in rows.iter().enumerate() {
            let mut seed = vec![0.0; 2];
            seed[output] = 1.0;
            let (pa, pb) = pullback.pull(&seed);
            assert_eq!((bits(ra), bits(rb)), (bits(&pa), bits(&pb)));
        }
    }
    // Rows of a matrix at an offset: one loop of products a row.
    let n = 70;
    let (a, x) = (data(n * n, 14.0), data(n, 15.0));
    let ((value, (ga, gx)), counted) = lent_by(|| matvec_sum_grad(&a, &x));
    assert_eq!(counted, n);
    let (pulled, pullback) = matvec_sum_pullback(&a, &x);
    let (pa, px) = pullback.pull(&1.0);
    assert_eq!(value.to_bits(), pulled.to_bits());
    assert_eq!((bits(&ga), bits(&gx)), (bits(&pa), bits(&px)));
}

/// How many gradients `f` took the sweep's buffer for (`ad::__private::gradients_handed_over`).
fn handed_over_by<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = ad::__private::gradients_handed_over();
    let result = f();
    (result, ad::__private::gradients_handed_over() - before)
}

#[test]
fn a_long_first_parameter_takes_the_adjoints_buffer_as_its_gradient() {
    // The tape's companions, which this test is about (the macro writes the adjoints of
    // some of these bodies out: tests/written_adjoints.rs).
    ad::__private::set_generated_adjoints(false);
    // From 4096 nodes at the tape's start, filling its buffer but for an eighth of their count
    // at most, the first parameter's gradient is the buffer itself; the other parameters' come
    // from what is left.
    let n = 70;
    let (a, x) = (data(n * n, 16.0), data(n, 17.0));
    let (pa, px) = matvec_sum_pullback(&a, &x).1.pull(&1.0);
    for _ in 0..2 {
        let ((value, (ga, gx)), handed) = handed_over_by(|| matvec_sum_grad(&a, &x));
        assert_eq!(handed, 1);
        assert_eq!(value.to_bits(), matvec_sum(&a, &x).to_bits());
        assert_eq!((bits(&ga), bits(&gx)), (bits(&pa), bits(&px)));
        for i in 0..n {
            assert_eq!(bits(&ga[i * n..(i + 1) * n]), bits(&x));
        }
        assert!(ga.capacity() <= ga.len() + ga.len() / 8);
    }
    let x = data(5000, 18.0);
    let ((value, gradient), handed) = handed_over_by(|| rosenbrock_grad(&x));
    assert_eq!(handed, 1);
    let (pulled, pullback) = rosenbrock_pullback(&x);
    assert_eq!(value.to_bits(), pulled.to_bits());
    assert_eq!(bits(&gradient), bits(&pullback.pull(&1.0)));
    // A parameter not held (a slice of `Var`s): the same.
    let ((value, of_vars), handed) = handed_over_by(|| not_held_grad(&x));
    assert_eq!(handed, 1);
    let (pulled, pullback) = not_held_pullback(&x);
    assert_eq!(value.to_bits(), pulled.to_bits());
    assert_eq!(bits(&of_vars), bits(&pullback.pull(&1.0)));
    // One buffer a row of `f_jacobian`, each swept anew.
    let ((value, rows), handed) = handed_over_by(|| moments_jacobian(&x));
    assert_eq!(handed, 2);
    assert_eq!(bits(&value), bits(&moments(&x)));
    let twice: Vec<f64> = x.iter().map(|v| 2.0 * v).collect();
    assert_eq!(bits(&rows[0]), bits(&vec![1.0; x.len()]));
    assert_eq!(bits(&rows[1]), bits(&twice));
    let ((_, pulled), handed) = handed_over_by(|| moments_vjp(&x, &vec![0.0, 1.0]));
    assert_eq!(handed, 1);
    assert_eq!(bits(&pulled), bits(&twice));
    // Below 4096 nodes: copied.
    let ((_, short), handed) = handed_over_by(|| rosenbrock_grad(&x[..4000]));
    assert_eq!(handed, 0);
    assert_eq!(
        bits(&short),
        bits(&rosenbrock_pullback(&x[..4000]).1.pull(&1.0))
    );
    // Two parameters of one length: more than an eighth of the first after it, copied.
    let y = data(5000, 19.0);
    let ((_, (gx, gy)), handed) = handed_over_by(|| dot_grad(&x, &y));
    assert_eq!(handed, 0);
    assert_eq!((bits(&gx), bits(&gy)), (bits(&y), bits(&x)));
    // A buffer a longer tape left on the thread: copied.
    let ((_, again), handed) = handed_over_by(|| rosenbrock_grad(&x));
    assert_eq!(handed, 0);
    assert_eq!(bits(&again), bits(&gradient));
}

#[test]
fn sums_that_hold_a_term_before_their_loop_sweep_it_first() {
    // The tape's companions, which this test is about (the macro writes the adjoints of
    // some of these bodies out: tests/written_adjoints.rs).
    ad::__private::set_generated_adjoints(false);
    // From 64 terms the rows and `shared` lend their partials after the term they hold, and
    // `stored` keeps its loop as runs after its own: every bit as the loops run as written.
    for (n, lent) in [(20, 0), (64, 5), (150, 5)] {
        let (a, x, b) = (data(4 * n + 1, 18.0), data(n, 19.0), data(4, 20.0));
        let ((value, (ga, gx, gb)), counted) = lent_by(|| affine_grad(&a, &x, &b));
        assert_eq!(counted, lent, "n = {n}");
        let (written, (wa, wx, wb)) = affine_as_written_grad(&a, &x, &b);
        assert_eq!(value.to_bits(), written.to_bits());
        assert_eq!(
            (bits(&ga), bits(&gx), bits(&gb)),
            (bits(&wa), bits(&wx), bits(&wb))
        );
        assert_eq!(value.to_bits(), affine(&a, &x, &b).to_bits());
        assert_gradient_matches(|x| affine(&a, x, &b), &x, &gx, 1e-6);
        assert_gradient_matches(|b| affine(&a, &x, b), &b, &gb, 1e-6);
    }
}

#[test]
fn the_gradient_of_a_held_function_is_differentiated_again() {
    let (x, y) = (data(40, 10.0), data(40, 11.0));
    // `Σ yᵢ² + Σ xᵢ`: `dot_grad`'s gradient is `(y, x)`.
    let (value, (gx, gy)) = gradient_norm_grad(&x, &y);
    let expected: f64 = y.iter().map(|v| v * v).sum::<f64>() + x.iter().sum::<f64>();
    assert!((value - expected).abs() <= 1e-12);
    assert!(gx.iter().all(|&g| g == 1.0));
    for (g, v) in gy.iter().zip(&y) {
        assert_eq!(g.to_bits(), (2.0 * v).to_bits());
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 128,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random lengths (across the thresholds for whole loops, runs and lent partials) and
    /// values: the held companions give what `f_pullback` gives, to the bit.
    #[test]
    fn held_parameters_agree_with_slices_of_vars_at_random(
        x in prop::collection::vec(-2.0f64..2.0, 2..300),
        seed in 0.0f64..10.0,
        c in -2.0f64..2.0,
    ) {
        // The tape's companions, which this test is about (the macro writes the adjoints of
        // some of these bodies out: tests/written_adjoints.rs).
        ad::__private::set_generated_adjoints(false);
        let n = x.len();
        let y = data(n, seed);
        let (value, (gx, gy)) = dot_grad(&x, &y);
        let (pulled, pullback) = dot_pullback(&x, &y);
        let (px, py) = pullback.pull(&1.0);
        prop_assert_eq!(value.to_bits(), pulled.to_bits());
        prop_assert_eq!((bits(&gx), bits(&gy)), (bits(&px), bits(&py)));
        let (value, gradient) = rosenbrock_grad(&x);
        let (pulled, pullback) = rosenbrock_pullback(&x);
        prop_assert_eq!(value.to_bits(), pulled.to_bits());
        prop_assert_eq!(bits(&gradient), bits(&pullback.pull(&1.0)));
        // Loops of products, their partials read from the parameters from 64 terms on
        // (`a[i + 1] * a[i]`: one parameter, two overlapping runs).
        let a = data(n + 1, seed + 2.0);
        let (value, (ga, gx)) = products_grad(&a, &x);
        let (pulled, pullback) = products_pullback(&a, &x);
        let (pa, px) = pullback.pull(&1.0);
        prop_assert_eq!(value.to_bits(), pulled.to_bits());
        prop_assert_eq!((bits(&ga), bits(&gx)), (bits(&pa), bits(&px)));
        // Sums that hold a term before their loop, against their loops run as written.
        let (a, b) = (data(4 * n + 1, seed + 3.0), data(4, seed + 4.0));
        let (value, (ga, gx, gb)) = affine_grad(&a, &x, &b);
        let (written, (wa, wx, wb)) = affine_as_written_grad(&a, &x, &b);
        prop_assert_eq!(value.to_bits(), written.to_bits());
        prop_assert_eq!(
            (bits(&ga), bits(&gx), bits(&gb)),
            (bits(&wa), bits(&wx), bits(&wb))
        );
        if n >= 6 {
            let w = data(n - 1, seed + 1.0);
            let (value, (gx, gw, gc)) = mixed_grad(&x, &w, c);
            let (pulled, pullback) = mixed_pullback(&x, &w, c);
            let (px, pw, pc) = pullback.pull(&1.0);
            prop_assert_eq!(value.to_bits(), pulled.to_bits());
            prop_assert_eq!(
                (bits(&gx), bits(&gw), gc.to_bits()),
                (bits(&px), bits(&pw), pc.to_bits())
            );
        }
    }
}

#[test]
fn halves_of_a_split_parameter_are_held_as_it_is() {
    let (hidden, n) = (8, 12);
    let inputs = data(n, 13.0);
    for extra in [0, 3] {
        let weights = data(hidden * n + 2 * hidden + 1 + extra, 14.0);
        let ((value, gradient), held) = held_by(|| layered_grad(&weights, &inputs, hidden));
        assert_eq!(held, 1);
        let (pulled, pullback) = layered_pullback(&weights, &inputs, hidden);
        assert_eq!(value.to_bits(), pulled.to_bits());
        assert_eq!(
            value.to_bits(),
            layered(&weights, &inputs, hidden).to_bits()
        );
        assert_eq!(bits(&gradient), bits(&pullback.pull(&1.0)));
        assert_gradient_matches(|w| layered(w, &inputs, hidden), &weights, &gradient, 1e-6);
        // What `_` and the length read has no derivative.
        assert!(gradient[hidden * n + 2 * hidden + 1..]
            .iter()
            .all(|&g| g == 0.0));
    }

    let weights = data(n + 1, 15.0);
    let ((value, gradient), held) = held_by(|| layered_iterated_grad(&weights, &inputs));
    assert_eq!(held, 0);
    assert_eq!(
        value.to_bits(),
        layered_iterated(&weights, &inputs).to_bits()
    );
    assert_gradient_matches(|w| layered_iterated(w, &inputs), &weights, &gradient, 1e-6);

    let (x, scale) = (data(4, 16.0), data(1, 17.0));
    let ((value, gradient), held) = held_by(|| shadowing_grad(&x, &scale));
    assert_eq!(held, 0);
    assert_eq!(value, x[0] * scale[0] + x[0] * x[1]);
    assert_eq!(gradient, vec![scale[0] + x[1], x[0], 0.0, 0.0]);
}

#[test]
fn a_split_past_the_end_panics_as_the_function_does() {
    let x = data(5, 18.0);
    let plain = expect_panic(|| split_past_the_end(&x, 6));
    let (message, held) = held_by(|| expect_panic(|| split_past_the_end_grad(&x, 6)));
    assert_eq!((message, held), (plain, 1));
    let ((value, gradient), held) = held_by(|| split_past_the_end_grad(&x, 2));
    assert_eq!((value, held), (x[0] + 3.0, 1));
    assert_eq!(gradient, vec![1.0, 0.0, 0.0, 0.0, 0.0]);
}

#[test]
fn ranges_as_indices_keep_the_slice_of_vars() {
    let (x, spans) = (data(5, 19.0), [..2, ..4]);
    let ((value, gradient), held) = held_by(|| ranged_indices_grad(&x, &spans));
    assert_eq!(held, 0);
    assert_eq!(value.to_bits(), ranged_indices(&x, &spans).to_bits());
    assert_eq!(value, x[1] + x[3] + x[2] * x[4] + 2.0 * x[0]);
    assert_eq!(gradient, vec![2.0, 1.0, x[4], 1.0, x[2]]);
}

#[test]
fn mapped_sums_and_gathers_index_held_halves() {
    let (x, idx) = (data(10, 20.0), [4usize, 0, 4]);
    let ((value, gradient), held) = held_by(|| gathered_grad(&x, &idx));
    assert_eq!(held, 1);
    let (pulled, pullback) = gathered_pullback(&x, &idx);
    assert_eq!(value.to_bits(), pulled.to_bits());
    assert_eq!(value.to_bits(), gathered(&x, &idx).to_bits());
    assert_eq!(bits(&gradient), bits(&pullback.pull(&1.0)));
    assert_gradient_matches(|x| gathered(x, &idx), &x, &gradient, 1e-6);
}

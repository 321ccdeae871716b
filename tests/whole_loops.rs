//! Loops recorded whole: `for i in a..b { total += e }` whose every scalar leaf is an element of
//! a slice at `i` plus an offset the loop does not change (`x[i]`, `x[i + 1]`, `a[i * n + j]`)
//! or a scalar the loop does not change, after `let`s the term inlines; and loops over the
//! items of slices (`iter`, `zip`, `enumerate`, `copied`, mapped sums), or at a counter the body
//! ends with (`x[k]`, `k += 1`). For `Var` the generated code hands a loop of at least 8 terms
//! to the tape in one call when each leaf's elements are consecutive nodes or constants;
//! otherwise the loop runs term by term. Both make the same record, so the gradients agree bit
//! for bit. The same for loops that write each term to an element at the index (`k[i] = x[i] *
//! y[i - 1]`, `y[i] += e`) or through `iter_mut` (`*y = e`): one call, a record per element,
//! when each leaf's elements are all nodes (in any order) or all constants. Long loops are kept
//! as runs of nodes (loop sums) or blocks (element loops) instead of slots, swept to the same
//! gradient, bit for bit (`ad::__private::loops_as_runs` counts them).
//!
//! Checked here, for each form: the gradient against central differences and against forward
//! mode (`Dual`, which never takes the whole-loop path), the value of `f::<f64>` against the same
//! function written by hand, the record of the whole-loop path against the term-by-term one
//! (element loops: `ad::__private::record_term_by_term`; loop sums: inputs seeded out of order,
//! or with constants among them), and that the path was taken (`ad::__private::whole_loops`).
//! Four property tests draw lengths, ranges, values, seeding orders and constants.

// Index loops are the form recorded whole.
#![allow(clippy::needless_range_loop)]

mod common;

use ad::{reverse_diff, Dual, Tape, Var};
use common::{assert_gradient_matches, bits, expect_panic};
use proptest::prelude::*;

/// `Σ (xᵢ − yᵢ)²`.
#[reverse_diff]
fn distance(x: &[f64], y: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += (x[i] - y[i]) * (x[i] - y[i]);
    }
    total
}

/// Neighbours in one term (`x[i]` and `x[i + 1]`), `let`s the term inlines, constant data and
/// the index as a number, subtracted from a start that is not zero, over a range that starts
/// at `low`.
#[reverse_diff]
fn neighbours(x: &[f64], #[no_grad] w: &[f64], low: usize) -> f64 {
    let mut total = 0.5;
    for i in low..x.len() - 1 {
        let d = x[i + 1] - x[i] * x[i];
        let e = w[i] - x[i];
        total -= 100.0 * (d * d) + e * e.sin() + i as f64 * x[1 + i];
    }
    total
}

/// `neighbours` by hand, over `f64`, the same operations in the same order.
fn neighbours_by_hand(x: &[f64], w: &[f64], low: usize) -> f64 {
    let pairs = x.windows(2).zip(w).enumerate().skip(low);
    pairs.fold(0.5, |total, (i, (pair, w))| {
        let (d, e) = (pair[1] - pair[0] * pair[0], w - pair[0]);
        total - (100.0 * (d * d) + e * e.sin() + i as f64 * pair[1])
    })
}

/// A `let` that calls a transcendental keeps its own record in every loop sum (a record that
/// inlined it would compute it again), so this loop is recorded term by term.
#[reverse_diff]
fn costly_let(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        let e = x[i].exp();
        total += e * e;
    }
    total
}

/// A matrix–vector product's rows (offset `i · n`, the vector read by every row), each through
/// `tanh`.
#[reverse_diff]
fn rows(a: &[f64], x: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    for i in 0..a.len() / n {
        let mut row = 0.0;
        for j in 0..n {
            row += a[i * n + j] * x[j];
        }
        total += row.tanh();
    }
    total
}

/// A local vector built one record per element (consecutive nodes), read beside a parameter.
#[reverse_diff]
fn local(x: &[f64]) -> f64 {
    let z: Vec<f64> = x.iter().map(|v| (0.5 * v).exp()).collect();
    let mut total = 0.0;
    for j in 0..z.len() {
        total += z[j] * x[j];
    }
    total
}

/// Items of zipped slices, constant data among them, and a scalar the loop does not change.
#[reverse_diff]
fn items(x: &[f64], y: &[f64], #[no_grad] w: &[f64], c: f64) -> f64 {
    let mut total = 0.0;
    for ((a, b), &v) in x.iter().zip(y).zip(w) {
        total += (a - c) * b * v;
    }
    total
}

/// Copied items with their `enumerate` index, which reads another slice at an offset.
#[reverse_diff]
fn enumerated(x: &[f64], y: &[f64]) -> f64 {
    let mut total = 0.0;
    for (j, a) in x.iter().copied().enumerate() {
        total += a * y[j + 1];
    }
    total
}

/// A mapped sum whose every term reads the largest value.
#[reverse_diff]
fn log_sum_exp(v: &[f64]) -> f64 {
    let mut largest = v[0];
    for &x in v {
        if x > largest {
            largest = x;
        }
    }
    let sum: f64 = v.iter().map(|x| (x - largest).exp()).sum();
    largest + sum.ln()
}

/// A penalty on neighbours, `u[i - 1]` and `u[i]`, weighted by a scalar the loop does not
/// change.
#[reverse_diff]
fn smooth(u: &[f64], lambda: f64, low: usize) -> f64 {
    let mut total = 0.0;
    for i in low..u.len() {
        let d = u[i] - u[i - 1];
        total += lambda * d * d;
    }
    total
}

/// A `let` that binds again a name an earlier `let` of the loop reads (`u` and `a` are also
/// parameters): the earlier `let` is no longer inlined, so the loop is recorded term by term.
#[reverse_diff]
fn rebound(x: &[f64], a: f64, u: f64) -> f64 {
    let mut total = u * 0.0;
    for i in 0..x.len() {
        let u = x[i] * a;
        let a = u + 1.0;
        total += u * a;
    }
    total
}

/// `let`s inlined through another `let` only, and one read by its value: term by term.
#[reverse_diff]
fn through_lets(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        let a = x[i] * 2.0;
        let b = a + 1.0;
        total += b * b;
    }
    let mut by_value = 0.0;
    for i in 0..x.len() {
        let d = x[i] - 0.5;
        by_value += d.value() * d;
    }
    total + by_value
}

/// A loop whose variable is not an index: an `i32`, as in the function as written.
#[reverse_diff]
fn not_an_index(c: f64, x: f64) -> f64 {
    let mut total = 0.0;
    for k in 0..10 {
        total += c * x * (k - 5) as f64;
    }
    let mut powers = 0.0;
    for k in 0..10 {
        powers += x.powi(k) * 0.5;
    }
    total + powers
}

/// A `let` the term does not read, whose element may be out of bounds.
#[reverse_diff]
fn unread_let(x: &[f64], y: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        let _check = y[i] * 2.0;
        total += x[i] * x[i];
    }
    total
}

/// `y[i]` read before `x[i - 1]`.
#[reverse_diff]
fn below_after(x: &[f64], y: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += y[i] * x[i - 1];
    }
    total
}

/// The stages of one Runge–Kutta step of gradbench's ode, `yᵢ' = xᵢ yᵢ₋₁`, `s` times, each
/// stage's entries written by a loop (`k[0]` copied from `x[0]`, so a stage's elements are not
/// consecutive nodes), then `y[i] += ..`, which reads the element it writes: `2s` loops over
/// `1..n` and `s` over `0..n` recorded whole.
#[reverse_diff]
fn stages(x: &[f64], s: usize) -> Vec<f64> {
    let n = x.len();
    let h = 2.0 / s as f64;
    let mut y = vec![0.0; n];
    let mut k1 = vec![0.0; n];
    let mut k2 = vec![0.0; n];
    for _ in 0..s {
        k1[0] = x[0];
        k2[0] = x[0];
        for i in 1..n {
            k1[i] = x[i] * y[i - 1];
        }
        for i in 1..n {
            k2[i] = x[i] * (y[i - 1] + h * k1[i - 1] / 2.0);
        }
        for i in 0..n {
            y[i] += h * (k1[i] + k2[i]) / 2.0;
        }
    }
    y
}

/// [`stages`] by hand, over `f64`, the same operations in the same order.
fn stages_by_hand(x: &[f64], s: usize) -> Vec<f64> {
    let n = x.len();
    let h = 2.0 / s as f64;
    let (mut y, mut k1, mut k2) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    for _ in 0..s {
        (k1[0], k2[0]) = (x[0], x[0]);
        for i in 1..n {
            k1[i] = x[i] * y[i - 1];
            k2[i] = x[i] * (y[i - 1] + h * k1[i - 1] / 2.0);
        }
        for i in 0..n {
            y[i] += h * (k1[i] + k2[i]) / 2.0;
        }
    }
    y
}

/// Every compound assignment to an element (`*=` reading a scalar the loop does not change,
/// `/=`, `-=` at an offset, `%=`), an assignment that reads the element it writes twice, one
/// that writes at an offset, `let`s the term inlines, and the `enumerate` index (whose loop
/// reads `z[0]`, a constant, among nodes, so it runs element by element).
#[reverse_diff]
fn element_updates(x: &[f64], c: f64, #[no_grad] w: &[f64]) -> f64 {
    let n = x.len();
    let mut y = x.to_vec();
    for i in 0..n {
        y[i] *= c;
    }
    for i in 0..n {
        y[i] /= 2.0 + x[i] * x[i];
    }
    for i in 1..n {
        y[i - 1] -= w[i] * x[i];
    }
    for i in 0..n {
        y[i] %= 3.0 + x[i];
    }
    for i in 0..n {
        y[i] = y[i] * y[i] + x[i];
    }
    let mut z = vec![0.0; n + 1];
    for i in 0..n {
        let d = x[i] - c;
        let e = d * w[i];
        z[i + 1] = d * e + y[i];
    }
    for (j, a) in x.iter().enumerate() {
        z[j] += a.sin() * 0.5;
    }
    z.iter().sum()
}

/// [`element_updates`] by hand, over `f64`.
fn element_updates_by_hand(x: &[f64], c: f64, w: &[f64]) -> f64 {
    let n = x.len();
    let mut y: Vec<f64> = x.iter().map(|v| v * c).collect();
    for i in 0..n {
        y[i] /= 2.0 + x[i] * x[i];
    }
    for i in 1..n {
        y[i - 1] -= w[i] * x[i];
    }
    for i in 0..n {
        y[i] %= 3.0 + x[i];
        y[i] = y[i] * y[i] + x[i];
    }
    let mut z = vec![0.0; n + 1];
    for i in 0..n {
        let d = x[i] - c;
        z[i + 1] = d * (d * w[i]) + y[i];
    }
    for (j, a) in x.iter().enumerate() {
        z[j] += a.sin() * 0.5;
    }
    z.iter().sum()
}

/// Loops that write elements but are recorded element by element: a recurrence (`y[i]` reads
/// `y[i - 1]`, written by the term before), a copy (no operation: no record), a loop that
/// reads the length of the slice it writes, and a term that reads the slice it writes at
/// another index through a `let`.
#[reverse_diff]
fn elements_apart(x: &[f64]) -> f64 {
    let n = x.len();
    let mut y = vec![0.0; n];
    y[0] = x[0];
    for i in 1..n {
        y[i] = y[i - 1] * 0.5 + x[i];
    }
    let mut copy = vec![0.0; n];
    // The copy as a user might write it.
    #[allow(clippy::manual_memcpy)]
    for i in 0..n {
        copy[i] = x[i];
    }
    for i in 0..n {
        copy[i] *= copy.len() as f64;
    }
    for i in 1..n {
        let before = y[i - 1];
        y[i] = before * x[i];
    }
    y.iter().sum::<f64>() + copy.iter().sum::<f64>()
}

/// A term of one operation whose leaf is both its operands: recorded element by element,
/// where the operation records two slots (one fused record would take one of partial `2x`);
/// with a second operation the loop fuses element by element too, so it is recorded whole.
#[reverse_diff]
fn squares(x: &[f64]) -> f64 {
    let n = x.len();
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = x[i] * x[i];
    }
    for i in 0..n {
        y[i] *= y[i];
    }
    let mut z = vec![0.0; n];
    for i in 0..n {
        z[i] = x[i] * x[i] + 1.0;
    }
    y.iter().sum::<f64>() + z.iter().sum::<f64>()
}

/// A loop whose term panics at `i = at` (division by zero), the panic caught in the body: the
/// elements written before it are recorded, as the loop as written records them.
#[reverse_diff]
fn caught(x: &[f64], at: usize) -> f64 {
    let n = x.len();
    let mut y = x.to_vec();
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for i in 0..n {
            y[i] = x[i] * (10 / (at - i)) as f64 + 1.0;
        }
    }));
    let mut total = 0.0;
    for i in 0..n {
        total += y[i] * y[i];
    }
    total
}

/// [`caught`] with a scalar advanced after the term: the panic at `i = at` leaves it advanced
/// by the terms before it, as the loop as written does.
#[reverse_diff]
fn caught_advanced(x: &[f64], at: usize) -> f64 {
    let n = x.len();
    let mut y = x.to_vec();
    let mut p = 1.0;
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for i in 0..n {
            y[i] = x[i] * p * (10 / (at - i)) as f64;
            p *= 0.5;
        }
    }));
    let mut total = p;
    for i in 0..n {
        total += y[i] * y[i];
    }
    total
}

/// [`caught`] with a partial the same in every term (`3`), the term panicking at `d[i]` for `i =
/// d.len()`: the block keeps that one partial when a term before the panic wrote it.
#[reverse_diff]
fn caught_same(x: &[f64], #[no_grad] d: &[f64]) -> f64 {
    let n = x.len();
    let mut y = x.to_vec();
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for i in 0..n {
            y[i] = x[i] * 3.0 + d[i];
        }
    }));
    let mut total = 0.0;
    for i in 0..n {
        total += y[i] * y[i];
    }
    total
}

/// Offsets whose computation overflows (`k - 1` with `k = 0`) behind a leaf out of bounds:
/// the loop as written panics at the leaf first.
#[reverse_diff]
fn offset_overflows(x: &[f64], z: &[f64], k: usize) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += z[i] * x[i + (k - 1)];
    }
    let mut y = vec![0.0; x.len()];
    for i in 0..x.len() {
        y[i + (k - 1)] = z[i] * 2.0;
    }
    total + y[0]
}

/// Element loops for the property test: an offset that varies between calls (`low`), a write
/// at an offset that reads the element it writes, a compound assignment to a copy of `x`, a
/// loop over the items of two slices, the items of a subslice written through `&mut` at a
/// counter; some read constants among nodes when `low > 0`.
#[reverse_diff]
fn element_loops(x: &[f64], low: usize) -> f64 {
    let n = x.len();
    let mut y = vec![0.0; n];
    for i in low..n {
        y[i] = x[i] * x[i - low] + 0.5;
    }
    for i in 0..n - low {
        y[i + low] -= y[i + low] * x[i];
    }
    let mut z = x.to_vec();
    for i in 1..n {
        z[i] *= y[i - 1] + x[i];
    }
    let mut w = vec![0.0; n];
    for (j, (a, b)) in z.iter().zip(&y).enumerate() {
        w[j] = a * b - 1.0;
    }
    let mut k = 0;
    for a in &mut w[low..] {
        *a += x[k] * y[k];
        k += 1;
    }
    let mut total = 0.0;
    for i in 0..n {
        total += w[i] * y[i];
    }
    total * (k as f64 + 1.0)
}

/// The lower triangle of `L·c` added to `c / 2`, as gradbench's gmm writes it (ADBench's
/// `Qtimesx`): each column's elements below the diagonal written through `&mut t[column +
/// 1..]`, `l` read at a counter that runs on across the columns.
#[reverse_diff]
fn triangle(l: &[f64], c: &[f64]) -> f64 {
    let d = c.len();
    let mut t = vec![0.0; d];
    for j in 0..d {
        t[j] = c[j] * 0.5;
    }
    let mut index = 0;
    for (column, centred) in c.iter().enumerate() {
        for below in &mut t[column + 1..] {
            *below += l[index] * centred;
            index += 1;
        }
    }
    t.iter().map(|v| v * v).sum::<f64>() + index as f64
}

/// [`triangle`] by hand, over `f64`, with indices.
fn triangle_by_hand(l: &[f64], c: &[f64]) -> f64 {
    let d = c.len();
    let mut t: Vec<f64> = c.iter().map(|v| v * 0.5).collect();
    let mut index = 0;
    for column in 0..d {
        for row in column + 1..d {
            t[row] += l[index] * c[column];
            index += 1;
        }
    }
    t.iter().map(|v| v * v).sum::<f64>() + index as f64
}

/// Items written through `iter_mut`: zipped with a slice, with their `enumerate` index, of a
/// whole vector through `&mut`, of a subslice zipped with another; elements written at a
/// counter (stepped in the body's value, with no `;`, and in a statement), over items and over
/// a range, whose term also reads the counter as a number.
#[reverse_diff]
fn written_items(x: &[f64], c: f64) -> f64 {
    let n = x.len();
    let mut y = vec![0.0; n];
    for (a, b) in y.iter_mut().zip(x) {
        *a = b * c;
    }
    for (j, a) in y.iter_mut().enumerate() {
        *a += x[j].sin() * 0.5;
    }
    for a in &mut y {
        *a *= c;
    }
    for (a, b) in y[1..].iter_mut().zip(&x[..n - 1]) {
        *a -= b * 0.25;
    }
    let mut z = vec![0.0; 2 * n];
    let mut k = 0;
    for b in x {
        z[k] = b * c - 1.0;
        k += 1
    }
    for i in 0..n {
        z[k] = x[i] * y[i] * (k as f64 - 0.5);
        k += 1;
    }
    y.iter().sum::<f64>() + z.iter().sum::<f64>() + k as f64
}

/// [`written_items`] by hand, over `f64`, with indices.
fn written_items_by_hand(x: &[f64], c: f64) -> f64 {
    let n = x.len();
    let mut y = vec![0.0; n];
    for j in 0..n {
        y[j] = x[j] * c;
        y[j] += x[j].sin() * 0.5;
        y[j] *= c;
    }
    for j in 1..n {
        y[j] -= x[j - 1] * 0.25;
    }
    let mut z = vec![0.0; 2 * n];
    for j in 0..n {
        z[j] = x[j] * c - 1.0;
        z[n + j] = x[j] * y[j] * ((n + j) as f64 - 0.5);
    }
    y.iter().sum::<f64>() + z.iter().sum::<f64>() + (2 * n) as f64
}

/// A loop sum whose term reads an element at a counter and the counter as a number, over the
/// items of a subslice.
#[reverse_diff]
fn counted_sum(x: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    let mut k = 0;
    for b in &x[n / 2..] {
        total += b * x[k] + k as f64 * 0.5;
        k += 1;
    }
    total + k as f64
}

/// Loops with counters that are not recorded whole: a counter read as a number only (no
/// element is at it, so its type is not known to be `usize`), one read in an offset from the index beside an element
/// at it, one that steps by two, an `i32` no element is read at, one that steps before the
/// element is read, and one that a zipped sequence starts at (`&x[p..]`, whose items each term
/// would read again).
#[reverse_diff]
fn counters_apart(x: &[f64]) -> f64 {
    let n = x.len();
    let mut y = vec![0.0; n];
    let mut k = 0;
    for i in 0..n {
        y[i] = x[i] * (k as f64 + 1.0);
        k += 1;
    }
    let mut o = 0;
    for i in 0..n / 2 {
        y[i] -= x[i + o] * x[o];
        o += 1;
    }
    let mut m = 0;
    for i in 0..n / 2 {
        y[i] += x[m] * 2.0;
        m += 2;
    }
    let mut count: i32 = 0;
    for i in 0..n {
        y[i] *= x[i] + 1.0;
        count += 1;
    }
    let mut j = 0;
    for i in 1..n {
        j += 1;
        y[i] -= x[j] * 0.5;
    }
    let mut p = 0;
    for (a, b) in y.iter_mut().zip(&x[p..]) {
        *a += b * x[p];
        p += 1;
    }
    y.iter().sum::<f64>() + (k + o + m + j + p) as f64 + f64::from(count)
}

/// [`counters_apart`] by hand, over `f64`, with indices.
fn counters_apart_by_hand(x: &[f64]) -> f64 {
    let n = x.len();
    let mut y: Vec<f64> = (0..n).map(|i| x[i] * (i as f64 + 1.0)).collect();
    for i in 0..n / 2 {
        y[i] -= x[2 * i] * x[i];
    }
    for i in 0..n / 2 {
        y[i] += x[2 * i] * 2.0;
    }
    for i in 0..n {
        y[i] *= x[i] + 1.0;
    }
    for i in 1..n {
        y[i] -= x[i] * 0.5;
    }
    for i in 0..n {
        y[i] += x[i] * x[i];
    }
    y.iter().sum::<f64>() + (n + n / 2 + 2 * (n / 2) + (n - 1) + n) as f64 + n as f64
}

/// Long loop sums, kept as runs when seeded in order: neighbours two apart in one term, read
/// in no particular order, beside a scalar the loop does not change and constant data (four
/// leaves with nodes); a scalar the loop does not change that is also an element the loop
/// reads (`m`, `x[k]`'s node, whose additions are made term by term); a sum that goes on after
/// its loop; and a second loop into the same sum (slots after the runs).
#[reverse_diff]
fn long_sums(x: &[f64], #[no_grad] w: &[f64], c: f64, k: usize) -> f64 {
    let n = x.len();
    let mut first = 0.0;
    for i in 0..n - 2 {
        first += x[i + 2] * x[i] - (x[i + 1] - c).sin() * w[i];
    }
    let mut second = 0.0;
    let m = x[k];
    for i in 0..n {
        second -= x[i] * (m + 0.25);
    }
    let mut third = 0.0;
    for i in 0..n {
        third += (x[i] - c) * (x[i] - c);
    }
    third += x[0] * c;
    for i in 1..n {
        third += x[i - 1] * w[i];
    }
    first * 0.5 + second.sin() + third.sqrt()
}

/// Two scalars the loop does not change, both `x[k]`'s node, read in every term beside `x[i]`:
/// that node's additions from both interleave term by term, the run's among them at term `k`.
#[reverse_diff]
fn twins(x: &[f64], k: usize) -> f64 {
    let m = x[k];
    let p = x[k];
    let mut total = 0.0;
    for i in 0..x.len() {
        total += x[i] * m - p * (x[i] + 1.5) * 0.5;
    }
    total
}

/// Loop sums whose terms use only `+`, `-`, `*`, `/` and unary `-`, computed two terms at a
/// time when kept as runs (`ad::__private::loops_in_lanes`): neighbours (`x[i]`, `x[i + 1]`)
/// through `let`s the term inlines; a scalar the loop does not change (`c`) and a constant
/// (`s`) in a quotient, under `-=`; a negation; and the same leaves through a transcendental,
/// computed one term at a time.
#[reverse_diff]
fn in_lanes(x: &[f64], c: f64, #[no_grad] s: f64) -> f64 {
    let n = x.len();
    let mut first = 0.0;
    for i in 0..n - 1 {
        let d = x[i + 1] - x[i] * x[i];
        let e = 1.0 - x[i];
        first += 100.0 * (d * d) + e * e;
    }
    let mut second = 1.0;
    for i in 0..n - 2 {
        second -= (x[i] - s * c) / (x[i + 2] * x[i + 2] + 1.0);
    }
    let mut third = 0.0;
    for i in 0..n {
        third += -(x[i] * c) + s;
    }
    let mut fourth = 0.0;
    for i in 0..n - 1 {
        fourth += (x[i + 1] - x[i]).sin() * c;
    }
    first + second * third + fourth
}

/// A term of lane-by-lane operations at a counter the body ends with (`y[k]`, `k += 1`), read
/// after the loop: computed one term at a time, which advances the counter.
#[reverse_diff]
fn counted_lanes(x: &[f64], y: &[f64]) -> f64 {
    let mut total = 0.0;
    let mut k = 0;
    for i in 0..x.len() {
        total += x[i] * y[k] - x[i];
        k += 1;
    }
    total * y[k - 1] + k as f64
}

/// Element loops whose terms use only `+`, `-`, `*`, `/` and unary `-`, computed two elements
/// at a time when kept as blocks (`ad::__private::loops_in_lanes`): a stage reading a
/// neighbour and a scalar the loop does not change (`a`, its first element copied from `x[0]`);
/// `-=` reading the element it writes (`b`, whose elements start as constants); partials the same in every term (`d`). Computed
/// one element at a time: a single product (`e`), a term read at a counter the loop advances
/// (`g`), and `sin` (`h`).
#[reverse_diff]
fn element_lanes(x: &[f64], c: f64) -> Vec<f64> {
    let n = x.len();
    let mut a = vec![0.0; n];
    let mut b = vec![1.0; n];
    let mut d = vec![0.0; n];
    let mut e = vec![0.0; n];
    let mut g = vec![0.0; n];
    let mut h = vec![0.0; n];
    a[0] = x[0];
    for i in 1..n {
        a[i] = x[i] * (x[i - 1] + c * 0.5);
    }
    for i in 0..n {
        b[i] -= (a[i] - x[i]) / (x[i] * x[i] + 1.0);
    }
    for i in 0..n {
        d[i] = -(3.0 * x[i]) - c;
    }
    for i in 0..n {
        e[i] = b[i] * d[i];
    }
    let mut k = 0;
    for i in 0..n {
        g[i] = e[k] * a[i] + c;
        k += 1;
    }
    for i in 0..n {
        h[i] = (g[i] - b[i]).sin();
    }
    h
}

/// [`element_lanes`] by hand, over `f64`, the same operations in the same order.
fn element_lanes_by_hand(x: &[f64], c: f64) -> Vec<f64> {
    let n = x.len();
    let mut a = vec![x[0]; n];
    for i in 1..n {
        a[i] = x[i] * (x[i - 1] + c * 0.5);
    }
    let b: Vec<f64> = (0..n)
        .map(|i| 1.0 - (a[i] - x[i]) / (x[i] * x[i] + 1.0))
        .collect();
    let d: Vec<f64> = x.iter().map(|&x| -(3.0 * x) - c).collect();
    let e: Vec<f64> = (0..n).map(|i| b[i] * d[i]).collect();
    let g: Vec<f64> = (0..n).map(|i| e[i] * a[i] + c).collect();
    (0..n).map(|i| (g[i] - b[i]).sin()).collect()
}

/// `Σ (xᵢ − yᵢ)(xᵢ + yᵢ) / 2`, a term in lanes over two slices.
#[reverse_diff]
fn pairs(x: &[f64], y: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += (x[i] - y[i]) * (x[i] + y[i]) / 2.0;
    }
    total
}

/// Long element loops, kept as blocks when seeded in order: neighbours two apart in one term
/// (`x[i]`, `x[i + 1]`, `x[i + 2]`) beside a scalar the loop does not change (`c`) and constant
/// data; the same neighbours in the other order (`x[i + 2]` before `x[i]`); a stencil
/// (`x[i - 1] - 2 x[i] + x[i + 1]`, whose three leaves share nodes, each reached first by
/// `x[i - 1]`); a scalar that is among the nodes the loop reads (`m`, `x[k]`'s node: kept as
/// slots); a leaf of two runs of nodes (`w[0] = x[1]`, then `w`'s own loop) read as the
/// element written; and the element written read twice.
#[reverse_diff]
fn long_elements(x: &[f64], #[no_grad] d: &[f64], c: f64, k: usize) -> Vec<f64> {
    let n = x.len();
    let mut y = vec![0.0; n - 2];
    for i in 0..n - 2 {
        y[i] = x[i] * (x[i + 1] - c).sin() + x[i + 2] * d[i];
    }
    let mut z = vec![0.0; n - 2];
    for i in 0..n - 2 {
        z[i] = x[i + 2] * x[i] + y[i];
    }
    let m = x[k];
    let mut u = vec![0.0; n];
    for i in 0..n {
        u[i] = x[i] * (m + 0.25);
    }
    let mut v = vec![0.0; n];
    for i in 1..n - 1 {
        v[i] = x[i] + c * (x[i - 1] - 2.0 * x[i] + x[i + 1]);
    }
    let mut w = vec![0.0; n - 2];
    w[0] = x[1];
    for i in 1..n - 2 {
        w[i] = z[i - 1] * y[i] + c * u[i] * v[i];
    }
    for i in 0..n - 2 {
        w[i] += w[i] * z[i] - w[i].cos();
    }
    w
}

/// An element loop over three slices, which the tests pass the same slice as: its three leaves
/// reach each node in the same term, in leaf order.
#[reverse_diff]
fn trio(a: &[f64], b: &[f64], c: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; a.len()];
    for i in 0..a.len() {
        out[i] = a[i] * b[i].sin() - c[i].exp();
    }
    out
}

/// Elements at the index inside a longer sum: `a[n * r + j + 1]`, `x[1 + k + j]`,
/// `x[k + (j + 2)]`, recorded whole; `x[j + k - 1]` (a difference after a sum) runs as written.
#[reverse_diff]
fn sums_of_offsets(a: &[f64], x: &[f64], n: usize, r: usize, k: usize) -> f64 {
    let mut total = 0.0;
    for j in 0..n - 1 {
        total += a[n * r + j + 1] * x[1 + k + j] - x[k + (j + 2)];
    }
    for j in 1..n {
        total += a[j] * x[j + k - 1];
    }
    total
}

/// [`sums_of_offsets`]' elements in loops that write an element, at `y[j + k + 1]`.
#[reverse_diff]
fn writes_at_offsets(a: &[f64], x: &[f64], n: usize, r: usize, k: usize) -> f64 {
    let mut y = vec![0.0; n + k + 1];
    for j in 0..n {
        y[j + k + 1] = x[j] * a[j + n * r];
    }
    for j in 0..n - 1 {
        y[j + k + 1] += a[n * r + j + 1] * x[1 + k + j];
    }
    y.iter().sum()
}

/// Element loops whose leaves' partials are the same in every term, kept once per block, and
/// others whose partials vary however constant their parts: `y`'s leaves (`h / 6` of a fixed
/// scalar and literals, the constant argument `c` squared: two kept once); `z`'s (a slice's
/// element at the index, the index: none); `u`'s (a literal: one; a counter: none); the update
/// of `y` by `0.5 * z[i]` (the element written and `0.5`: two); `v`'s items at a counter (`h`:
/// one; a power to the counter: none).
#[reverse_diff]
fn same_partials(x: &[f64], #[no_grad] w: &[f64], #[no_grad] c: f64, s: usize) -> Vec<f64> {
    let n = x.len() - 1;
    let h = 2.0 / s as f64;
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = h * x[i] / 6.0 - c.powi(2) * x[i + 1];
    }
    let mut z = vec![0.0; n];
    for i in 0..n {
        z[i] = w[i] * y[i] + (i as f64 * 0.01) * x[i] - y[i] / w[i];
    }
    let mut u = vec![0.0; n];
    let mut k = 0;
    for i in 0..n {
        u[i] = x[k] * 2.0 + z[i] * (k as f64 * 0.01);
        k += 1;
    }
    for i in 0..n {
        y[i] += 0.5 * z[i];
    }
    let mut v = vec![0.0; n];
    let mut k = 0;
    for a in &mut v[..] {
        *a = u[k] * h + x[k] * 0.99f64.powi(k as i32);
        k += 1;
    }
    for i in 0..n {
        v[i] *= y[i];
    }
    v
}

/// A loop sum that advances scalars after its term: a power series (`power *= t`, `t`
/// constant data), and a weight advanced twice.
#[reverse_diff]
fn power_series(c: &[f64], #[no_grad] t: f64) -> f64 {
    let mut total = 0.0;
    let mut power = 1.0;
    let mut weight = 1.0;
    for coefficient in c {
        total += coefficient * power * weight;
        power *= t;
        weight *= 0.5;
        weight += 0.25;
    }
    total + power + weight
}

/// An element loop whose term reads two scalars it advances, one by the other and a literal,
/// the other by a constant of the function (`1.0 + t`, a `let` the loop does not change).
#[reverse_diff]
fn advanced(c: &[f64], #[no_grad] t: f64) -> f64 {
    let growth = 1.0 + t;
    let mut y = vec![0.0; c.len()];
    let mut scale: f64 = 0.5;
    let mut shift = 1.0;
    for i in 0..c.len() {
        y[i] = c[i] * scale - shift;
        shift = shift * 0.9 + scale;
        scale /= growth;
    }
    y[0] * y[c.len() - 1] + scale + shift
}

/// [`power_series`] by hand.
fn power_series_by_hand(c: &[f64], t: f64) -> f64 {
    let (mut total, mut power, mut weight) = (0.0, 1.0, 1.0);
    for coefficient in c {
        total += coefficient * power * weight;
        power *= t;
        weight = weight * 0.5 + 0.25;
    }
    total + power + weight
}

/// [`advanced`] by hand.
fn advanced_by_hand(c: &[f64], t: f64) -> f64 {
    let growth = 1.0 + t;
    let (mut y, mut scale, mut shift) = (vec![0.0; c.len()], 0.5, 1.0);
    for i in 0..c.len() {
        y[i] = c[i] * scale - shift;
        shift = shift * 0.9 + scale;
        scale /= growth;
    }
    y[0] * y[c.len() - 1] + scale + shift
}

/// llsq's residuals (gradbench): `power` advanced by `t`, a scalar computed from integers
/// alone, so a constant on the tape.
#[reverse_diff]
fn residuals(x: &[f64], n: usize) -> f64 {
    let mut total = 0.0;
    for i in 0..n {
        let t = -1.0 + i as f64 * 2.0 / (n as f64 - 1.0);
        let mut residual: f64 = t.signum();
        let mut power: f64 = 1.0;
        for coefficient in x {
            residual -= coefficient * power;
            power *= t;
        }
        total += residual * residual;
    }
    total / 2.0
}

/// A power series at a differentiable point, and scalars advanced that the loop cannot take
/// over `f64`s: by an element (`q *= c[i]`), before the term reads it (`p`), by a `let` of the
/// body (`r`).
#[reverse_diff]
fn advanced_apart(c: &[f64], t: f64) -> f64 {
    let mut total = 0.0;
    let mut power = 1.0;
    for coefficient in c {
        total += coefficient * power;
        power *= t;
    }
    let mut by_element = 0.0;
    let mut q = 1.0;
    for i in 0..c.len() {
        by_element += c[i] * q;
        q *= c[i];
    }
    let mut before = 0.0;
    let mut p: f64 = 1.0;
    for i in 0..c.len() {
        p *= 0.5;
        before += c[i] * p;
    }
    let mut by_let = 0.0;
    let mut r = 1.0;
    for i in 0..c.len() {
        let s = 0.5 * c[i];
        by_let += s * r;
        r *= s;
    }
    total + power + by_element + q + before + p + by_let + r
}

/// [`advanced_apart`] by hand.
fn advanced_apart_by_hand(c: &[f64], t: f64) -> f64 {
    let (mut total, mut power) = (0.0, 1.0);
    for coefficient in c {
        total += coefficient * power;
        power *= t;
    }
    let (mut by_element, mut q) = (0.0, 1.0);
    for i in 0..c.len() {
        by_element += c[i] * q;
        q *= c[i];
    }
    let (mut before, mut p) = (0.0, 1.0);
    for i in 0..c.len() {
        p *= 0.5;
        before += c[i] * p;
    }
    let (mut by_let, mut r) = (0.0, 1.0);
    for i in 0..c.len() {
        let s = 0.5 * c[i];
        by_let += s * r;
        r *= s;
    }
    total + power + by_element + q + before + p + by_let + r
}

/// Runs `f` on a tape over `values`, seeded in order (`order` `None`) or in the given order of
/// their indices, with the indices in `constants` made constants: the value, the gradient, the
/// nodes recorded and the loops recorded whole.
fn on_tape(
    values: &[f64],
    order: Option<&[usize]>,
    constants: &[usize],
    f: impl Fn(&[Var]) -> Var,
) -> (f64, Vec<f64>, usize, usize) {
    on_tape_as(false, values, order, constants, f)
}

/// [`on_tape`], every loop recorded term by term when `term_by_term`.
fn on_tape_as(
    term_by_term: bool,
    values: &[f64],
    order: Option<&[usize]>,
    constants: &[usize],
    f: impl Fn(&[Var]) -> Var,
) -> (f64, Vec<f64>, usize, usize) {
    let tape = Tape::new();
    if term_by_term {
        ad::__private::record_term_by_term(&tape);
    }
    let mut vars = vec![Var::constant(0.0); values.len()];
    let in_order: Vec<usize> = (0..values.len()).collect();
    for &i in order.unwrap_or(&in_order) {
        vars[i] = if constants.contains(&i) {
            Var::constant(values[i])
        } else {
            tape.var(values[i])
        };
    }
    let y = f(&vars);
    tape.backward(y);
    let gradient = vars.iter().map(|&v| tape.adjoint(v)).collect();
    (
        y.value(),
        gradient,
        tape.len(),
        ad::__private::whole_loops(&tape),
    )
}

/// The gradient of `f` by forward mode, one direction per input.
fn by_dual(values: &[f64], f: impl Fn(&[Dual<f64>]) -> Dual<f64>) -> Vec<f64> {
    (0..values.len())
        .map(|k| {
            let duals: Vec<Dual<f64>> = values
                .iter()
                .enumerate()
                .map(|(i, &v)| Dual::new(v, if i == k { 1.0 } else { 0.0 }))
                .collect();
            f(&duals).tangent
        })
        .collect()
}

/// Checks `f`, whose whole loops are loop sums, at `values`: the whole-loop path taken
/// `whole` times when seeded in order, none seeded in reverse (the slices are not runs), and
/// the same value, gradient (bit for bit) and node count; the gradient against forward mode
/// and central differences, and the value against `plain`.
fn check(
    values: &[f64],
    whole: usize,
    f: impl Fn(&[Var]) -> Var,
    dual: impl Fn(&[Dual<f64>]) -> Dual<f64>,
    plain: impl Fn(&[f64]) -> f64,
) {
    check_against(values, whole, false, f, dual, plain);
}

/// [`check`] for `f` whose whole loops write elements: none recorded whole with
/// `record_term_by_term` (seeded in reverse, they still are: any nodes will do).
fn check_elements(
    values: &[f64],
    whole: usize,
    f: impl Fn(&[Var]) -> Var,
    dual: impl Fn(&[Dual<f64>]) -> Dual<f64>,
    plain: impl Fn(&[f64]) -> f64,
) {
    check_against(values, whole, true, f, dual, plain);
}

/// [`check`] and [`check_elements`]: the run that records no loop whole is the one with
/// `record_term_by_term` when `elements`, else the one seeded in reverse.
fn check_against(
    values: &[f64],
    whole: usize,
    elements: bool,
    f: impl Fn(&[Var]) -> Var,
    dual: impl Fn(&[Dual<f64>]) -> Dual<f64>,
    plain: impl Fn(&[f64]) -> f64,
) {
    let (value, gradient, nodes, loops) = on_tape(values, None, &[], &f);
    assert_eq!(loops, whole, "loops recorded whole");
    assert_eq!(value.to_bits(), plain(values).to_bits());
    let reversed: Vec<usize> = (0..values.len()).rev().collect();
    for (term_by_term, order) in [(true, None), (false, Some(&reversed[..]))] {
        let (value_by_term, gradient_by_term, nodes_by_term, loops_by_term) =
            on_tape_as(term_by_term, values, order, &[], &f);
        if term_by_term == elements {
            assert_eq!(loops_by_term, 0, "every loop is recorded term by term");
        }
        assert_eq!(value.to_bits(), value_by_term.to_bits());
        assert_eq!(nodes, nodes_by_term);
        for (a, b) in gradient.iter().zip(&gradient_by_term) {
            assert_eq!(
                a.to_bits(),
                b.to_bits(),
                "{gradient:?} against {gradient_by_term:?}"
            );
        }
    }
    for (a, b) in gradient.iter().zip(by_dual(values, dual)) {
        assert!(
            (a - b).abs() <= 1e-10 * b.abs().max(1.0),
            "{a} against forward mode {b}"
        );
    }
    assert_gradient_matches(plain, values, &gradient, 1e-6);
}

/// `x` with the inputs at `constants` made constants (no tangent), as [`on_tape`] seeds them.
fn held_constant(x: &[Dual<f64>], constants: &[usize]) -> Vec<Dual<f64>> {
    x.iter()
        .enumerate()
        .map(|(i, v)| {
            if constants.contains(&i) {
                Dual::new(v.value, 0.0)
            } else {
                *v
            }
        })
        .collect()
}

/// The bits of each number, so that comparisons tell -0.0 from 0.0.
/// Splits `values` at `at`.
fn split<T>(values: &[T], at: usize) -> (&[T], &[T]) {
    values.split_at(at)
}

#[test]
fn a_distance_is_recorded_whole() {
    let values: Vec<f64> = (0..20).map(|i| (i as f64 * 0.7).sin()).collect();
    let n = values.len() / 2;
    check(
        &values,
        1,
        |v| {
            let (x, y) = split(v, n);
            distance(x, y)
        },
        |v| {
            let (x, y) = split(v, n);
            distance(x, y)
        },
        |v| {
            let (x, y) = split(v, n);
            x.iter()
                .zip(y)
                .fold(0.0, |total, (a, b)| total + (a - b) * (a - b))
        },
    );
    let (x, y) = split(&values, n);
    let (value, (gx, gy)) = distance_grad(x, y);
    assert_eq!(value, distance(x, y));
    for i in 0..n {
        assert_eq!((gx[i], gy[i]), (2.0 * (x[i] - y[i]), -2.0 * (x[i] - y[i])));
    }
}

#[test]
fn neighbours_lets_constants_and_offsets_are_recorded_whole() {
    let values: Vec<f64> = (0..12).map(|i| 0.3 * (i as f64 * 1.3).cos()).collect();
    let w: Vec<f64> = (0..12).map(|i| 0.1 * i as f64).collect();
    for low in [0, 3] {
        check(
            &values,
            1,
            |x| neighbours(x, &w, low),
            |x| neighbours(x, &w, low),
            |x| neighbours_by_hand(x, &w, low),
        );
    }
}

#[test]
fn matrix_rows_are_recorded_whole() {
    let values: Vec<f64> = (0..40).map(|i| 0.2 * (i as f64 * 0.9).sin()).collect();
    let plain = |v: &[f64]| {
        let (a, x) = split(v, 32);
        a.chunks(8)
            .map(|row| row.iter().zip(x).fold(0.0, |s, (a, x)| s + a * x).tanh())
            .fold(0.0, |total, row| total + row)
    };
    check(
        &values,
        4,
        |v| {
            let (a, x) = split(v, 32);
            rows(a, x)
        },
        |v| {
            let (a, x) = split(v, 32);
            rows(a, x)
        },
        plain,
    );
}

#[test]
fn a_local_vector_of_records_is_recorded_whole() {
    let values: Vec<f64> = (0..9).map(|i| 0.4 * (i as f64 * 2.1).sin()).collect();
    check(&values, 1, local, local, |x| {
        x.iter().fold(0.0, |total, v| total + (0.5 * v).exp() * v)
    });
}

#[test]
fn zipped_items_constants_and_a_scalar_are_recorded_whole() {
    let values: Vec<f64> = (0..20).map(|i| (i as f64 * 1.1).cos()).collect();
    // `y` is one longer than `x`: the zip stops at the shorter.
    let w: Vec<f64> = (0..9).map(|i| 0.5 - 0.25 * i as f64).collect();
    let f = |v: &[Var]| items(&v[..9], &v[9..19], &w, v[19]);
    let plain = |v: &[f64]| (0..9).fold(0.0, |total, i| total + (v[i] - v[19]) * v[9 + i] * w[i]);
    check(
        &values,
        1,
        f,
        |v| items(&v[..9], &v[9..19], &w, v[19]),
        plain,
    );
}

#[test]
fn enumerated_items_are_recorded_whole() {
    let values: Vec<f64> = (0..19).map(|i| 0.3 * i as f64 - 1.0).collect();
    let plain = |v: &[f64]| (0..9).fold(0.0, |total, j| total + v[j] * v[9 + j + 1]);
    check(
        &values,
        1,
        |v| enumerated(&v[..9], &v[9..]),
        |v| enumerated(&v[..9], &v[9..]),
        plain,
    );
}

#[test]
fn a_mapped_sum_reading_a_scalar_is_recorded_whole() {
    let values = [0.3, -1.2, 2.5, 0.7, 2.4, -0.5, 1.0, 2.45, 0.1];
    let plain = |v: &[f64]| {
        let largest = v.iter().fold(v[0], |a, &b| if b > a { b } else { a });
        let sum = v.iter().fold(-0.0, |sum, x| sum + (x - largest).exp());
        largest + sum.ln()
    };
    check(&values, 1, log_sum_exp, log_sum_exp, plain);
}

#[test]
fn an_element_below_the_index_is_recorded_whole() {
    let values: Vec<f64> = (0..13).map(|i| (i as f64).sqrt()).collect();
    let plain = |v: &[f64]| {
        let penalty = |i: usize| v[12] * (v[i] - v[i - 1]) * (v[i] - v[i - 1]);
        (1..12).fold(0.0, |total, i| total + penalty(i))
    };
    check(
        &values,
        1,
        |v| smooth(&v[..12], v[12], 1),
        |v| smooth(&v[..12], v[12], 1),
        plain,
    );
}

/// What `u[i - 1]` with `i = 0` panics with: the subtraction where it is checked (debug
/// builds), the index it wraps to otherwise.
const BELOW_THE_FIRST: &str = if cfg!(debug_assertions) {
    "attempt to subtract with overflow"
} else {
    "index out of bounds"
};

#[test]
fn an_element_below_the_first_index_panics_as_the_function_does() {
    let u: Vec<f64> = (0..12).map(f64::from).collect();
    let plain = || {
        let _ = smooth(&u, 1.0, 0);
    };
    let grad = || {
        let _ = smooth_grad(&u, 1.0, 0);
    };
    for f in [&plain as &dyn Fn(), &grad] {
        assert!(expect_panic(f).contains(BELOW_THE_FIRST));
    }
}

#[test]
fn a_let_bound_again_is_recorded_term_by_term() {
    let values: Vec<f64> = (0..11).map(|i| 0.2 * i as f64 - 0.7).collect();
    let plain = |v: &[f64]| {
        let (x, a) = (&v[..9], v[9]);
        x.iter().fold(v[10] * 0.0, |total, x| {
            let u = x * a;
            total + u * (u + 1.0)
        })
    };
    let f = |v: &[Var]| rebound(&v[..9], v[9], v[10]);
    check(&values, 0, f, |v| rebound(&v[..9], v[9], v[10]), plain);
}

#[test]
fn lets_inlined_through_lets_or_read_by_value() {
    let values: Vec<f64> = (0..9).map(|i| 0.3 * i as f64 - 1.1).collect();
    let (value, gradient, _, loops) = on_tape(&values, None, &[], through_lets);
    // The first loop inlines `a` through `b`; the second reads `d` by its value.
    assert_eq!(loops, 1);
    let reversed: Vec<usize> = (0..values.len()).rev().collect();
    let (value_by_term, gradient_by_term, _, _) =
        on_tape(&values, Some(&reversed), &[], through_lets);
    assert_eq!(value.to_bits(), value_by_term.to_bits());
    assert_eq!(bits(&gradient), bits(&gradient_by_term));
    // `d.value()` passes no derivative: d/dx of (2x + 1)² + c·(x − 0.5) with c = x − 0.5.
    for (x, g) in values.iter().zip(&gradient) {
        let expected = 4.0 * (2.0 * x + 1.0) + (x - 0.5);
        assert!((g - expected).abs() < 1e-12, "{g} against {expected}");
    }
}

#[test]
fn a_loop_variable_that_is_no_index_keeps_its_type() {
    let (value, (gc, gx)) = not_an_index_grad(2.0, 0.5);
    let expected: f64 = (0..10).map(|k| 0.5 * 0.5f64.powi(k)).sum::<f64>() - 5.0;
    assert!(
        (value - expected).abs() < 1e-12,
        "{value} against {expected}"
    );
    assert_eq!(gc, -2.5);
    let powers: f64 = (1..10).map(|k| 0.5 * k as f64 * 0.5f64.powi(k - 1)).sum();
    assert!((gx - (-10.0 + powers)).abs() < 1e-12);
}

#[test]
#[should_panic(expected = "index out of bounds: the len is 3 but the index is 3")]
fn a_let_the_term_does_not_read_still_panics() {
    let x: Vec<f64> = (0..10).map(f64::from).collect();
    let _ = unread_let_grad(&x, &[1.0, 2.0, 3.0]);
}

#[test]
#[should_panic(expected = "index out of bounds: the len is 0 but the index is 0")]
fn leaves_panic_in_the_order_the_term_reads_them() {
    let x: Vec<f64> = (0..10).map(f64::from).collect();
    let _ = below_after_grad(&x, &[]);
}

#[test]
fn a_term_reading_a_costly_let_is_recorded_term_by_term() {
    let values = [0.1, -0.4, 0.3];
    check(&values, 0, costly_let, costly_let, |x| {
        x.iter().fold(0.0, |total, v| total + v.exp() * v.exp())
    });
}

#[test]
fn constants_among_the_leaves() {
    let values: Vec<f64> = (0..20).map(|i| 0.5 + 0.1 * i as f64).collect();
    let f = |v: &[Var]| {
        let (x, y) = split(v, 10);
        distance(x, y)
    };
    let twice_apart = |i: usize| 2.0 * (values[i] - values[i + 10]);
    // All of `y` constant: recorded whole, with slots for `x` alone.
    let constants: Vec<usize> = (10..20).collect();
    let (value, gradient, _, loops) = on_tape(&values, None, &constants, f);
    assert_eq!(loops, 1);
    assert_eq!(value, distance(&values[..10], &values[10..]));
    assert_eq!(gradient[..10], (0..10).map(twice_apart).collect::<Vec<_>>());
    assert_eq!(&gradient[10..], &[0.0; 10]);
    // One constant among recorded values: term by term, the same gradient.
    let (_, gradient, _, loops) = on_tape(&values, None, &[2], f);
    assert_eq!(loops, 0);
    assert_eq!(gradient[2], 0.0);
    assert_eq!(gradient[12], -twice_apart(2));
}

#[test]
fn a_loop_of_fewer_than_8_terms_is_recorded_term_by_term() {
    let values: Vec<f64> = (0..14).map(|i| (i as f64 * 0.3).sin()).collect();
    let f = |v: &[Var]| distance(&v[..7], &v[7..]);
    let plain = |v: &[f64]| {
        (0..7).fold(0.0, |total, i| {
            total + (v[i] - v[7 + i]) * (v[i] - v[7 + i])
        })
    };
    check(&values, 0, f, |v| distance(&v[..7], &v[7..]), plain);
}

#[test]
fn an_empty_loop_adds_nothing() {
    let empty: [f64; 0] = [];
    let (value, gradient) = distance_grad(&empty, &empty);
    assert_eq!(value, 0.0);
    assert!(gradient.0.is_empty() && gradient.1.is_empty());
    let x = [0.5, 1.5];
    let w = [0.0, 0.0];
    assert_eq!(neighbours_grad(&x, &w, 1).0, 0.5);
}

#[test]
#[should_panic(expected = "index out of bounds: the len is 2 but the index is 2")]
fn a_leaf_past_its_slice_panics_as_the_function_does() {
    // `y` is shorter than `x`: the loop as written runs and panics at `y[2]`.
    let _ = distance_grad(&[1.0, 2.0, 3.0], &[1.0, 2.0]);
}

#[test]
fn element_loops_of_runge_kutta_stages_are_recorded_whole() {
    // At 12 points a node per element; at 120 each loop is kept as a block (`k1[i - 1]` and
    // `k2[i]` read two runs each: `k[0] = x[0]`, then the stage's own loop).
    for (len, blocks) in [(12, 0), (120, 3)] {
        let values: Vec<f64> = (0..len)
            .map(|i| 0.3 + 0.6 / len as f64 * i as f64)
            .collect();
        for s in [1, 3] {
            let last = |y: Vec<Var>| y[y.len() - 1];
            check_elements(
                &values,
                3 * s,
                |x| last(stages(x, s)),
                |x| {
                    let y = stages(x, s);
                    y[y.len() - 1]
                },
                |x| stages_by_hand(x, s)[x.len() - 1],
            );
            assert_eq!(stages(&values, s), stages_by_hand(&values, s));
            assert_eq!(loops_kept(&values, |x| stages(x, s)), (3 * s, blocks * s));
            // Held as arrays (`tests/held_arrays.rs`), `y`, `k1` and `k2` keep the runs their
            // blocks wrote: 3 leaves taken in the first step (`y` is constants, and its own
            // loop reads the elements no block wrote yet), 6 in each after (`y` in each loop,
            // `k1` twice, `k2` once).
            let known = if blocks > 0 { 3 + 6 * (s - 1) } else { 0 };
            assert_eq!(leaves_known(&values, |x| stages(x, s)), known);
        }
    }
}

#[test]
fn compound_assignments_to_elements_are_recorded_whole() {
    let values: Vec<f64> = (0..11)
        .map(|i| 0.4 * (i as f64 * 0.9).sin() + 0.1)
        .collect();
    let w: Vec<f64> = (0..10).map(|i| 0.2 * i as f64 - 0.5).collect();
    let f = |v: &[Var]| element_updates(&v[..10], v[10], &w);
    let dual = |v: &[Dual<f64>]| element_updates(&v[..10], v[10], &w);
    let plain = |v: &[f64]| element_updates_by_hand(&v[..10], v[10], &w);
    // The last loop reads `z[0]`, a constant, among `z`'s nodes: element by element.
    check_elements(&values, 6, f, dual, plain);
    assert_eq!(
        element_updates(&values[..10], values[10], &w).to_bits(),
        plain(&values).to_bits()
    );
}

#[test]
fn a_triangle_written_through_iter_mut_at_a_counter_is_recorded_whole() {
    for (d, whole, blocks) in [(12, 5, 0), (40, 33, 9)] {
        let l_count = d * (d - 1) / 2;
        let values: Vec<f64> = (0..l_count + d)
            .map(|i| 0.3 * (i as f64 * 0.37).sin() + 0.05)
            .collect();
        let f = |v: &[Var]| triangle(&v[..l_count], &v[l_count..]);
        let dual = |v: &[Dual<f64>]| triangle(&v[..l_count], &v[l_count..]);
        let plain = |v: &[f64]| triangle_by_hand(&v[..l_count], &v[l_count..]);
        // `t`'s loop and each column of at least 8 elements below the diagonal (`d - 8` of
        // them) whole; `t`'s and the columns of at least 32 kept as blocks.
        check_elements(&values, whole, f, dual, plain);
        assert_eq!(loops_kept(&values, f), (whole, blocks));
        assert_eq!(
            triangle(&values[..l_count], &values[l_count..]).to_bits(),
            plain(&values).to_bits()
        );
    }
}

#[test]
fn items_written_through_iter_mut_and_elements_at_counters_are_recorded_whole() {
    let values: Vec<f64> = (0..13)
        .map(|i| 0.4 * (i as f64 * 0.9).sin() + 0.1)
        .collect();
    let f = |v: &[Var]| written_items(&v[..12], v[12]);
    let dual = |v: &[Dual<f64>]| written_items(&v[..12], v[12]);
    let plain = |v: &[f64]| written_items_by_hand(&v[..12], v[12]);
    check_elements(&values, 6, f, dual, plain);
    assert_eq!(
        written_items(&values[..12], values[12]).to_bits(),
        plain(&values).to_bits()
    );
}

#[test]
fn a_loop_sum_that_reads_at_a_counter_is_recorded_whole() {
    let values: Vec<f64> = (0..21).map(|i| (i as f64 * 0.4).cos()).collect();
    let plain = |x: &[f64]| {
        let half = x.len() / 2;
        let total = (0..x.len() - half).fold(0.0, |total, j| {
            total + (x[half + j] * x[j] + j as f64 * 0.5)
        });
        total + (x.len() - half) as f64
    };
    check(&values, 1, counted_sum, counted_sum, plain);
    assert_eq!(counted_sum(&values).to_bits(), plain(&values).to_bits());
}

#[test]
fn loops_with_counters_of_other_forms_run_as_written() {
    let values: Vec<f64> = (0..16).map(|i| 0.5 + 0.1 * i as f64).collect();
    check_elements(
        &values,
        0,
        counters_apart,
        counters_apart,
        counters_apart_by_hand,
    );
    assert_eq!(
        counters_apart(&values).to_bits(),
        counters_apart_by_hand(&values).to_bits()
    );
}

#[test]
fn element_loops_that_read_what_they_write_elsewhere_are_recorded_element_by_element() {
    let values: Vec<f64> = (0..10).map(|i| 0.5 + 0.1 * i as f64).collect();
    let plain = |x: &[f64]| {
        let n = x.len() as f64;
        let mut y = vec![x[0]];
        for i in 1..x.len() {
            y.push(y[i - 1] * 0.5 + x[i]);
        }
        for i in 1..x.len() {
            y[i] = y[i - 1] * x[i];
        }
        y.iter().sum::<f64>() + x.iter().map(|v| v * n).sum::<f64>()
    };
    check_elements(&values, 0, elements_apart, elements_apart, plain);
    // Ten inputs; one record per element of the recurrence, of the scaling and of the
    // products; the copy makes none; the two sums one each, and their sum one.
    let (_, _, nodes, _) = on_tape(&values, None, &[], elements_apart);
    assert_eq!(nodes, 10 + 9 + 10 + 9 + 3);
}

#[test]
fn element_loops_with_constants_among_a_leaf_run_element_by_element() {
    let values: Vec<f64> = (0..12).map(|i| 0.3 + 0.05 * i as f64).collect();
    let f = |x: &[Var]| *stages(x, 2).last().unwrap();
    // `x[3]` constant: the loops reading `x` run element by element. So does the first step's
    // `y[i] += ..`, which reads `k1[3] = x[3] · y[2]`, a constant while `y` is zero; in the
    // second step every element of `k1` and `k2` is a node, so that loop is whole. The
    // gradient is the same as with every loop term by term.
    let (value, gradient, nodes, loops) = on_tape(&values, None, &[3], f);
    assert_eq!(loops, 1);
    let (value_by_term, gradient_by_term, nodes_by_term, _) =
        on_tape_as(true, &values, None, &[3], f);
    assert_eq!(value.to_bits(), value_by_term.to_bits());
    assert_eq!((gradient, nodes), (gradient_by_term, nodes_by_term));
}

#[test]
fn an_offset_that_overflows_panics_where_the_function_does() {
    let x: Vec<f64> = (0..10).map(f64::from).collect();
    let z: Vec<f64> = (0..10).map(f64::from).collect();
    for (z, message) in [(&[][..], "index out of bounds"), (&z[..], BELOW_THE_FIRST)] {
        let plain = || {
            let _ = offset_overflows(&x, z, 0);
        };
        let grad = || {
            let _ = offset_overflows_grad(&x, z, 0);
        };
        for f in [&plain as &dyn Fn(), &grad] {
            let text = expect_panic(f);
            assert!(text.contains(message), "{text}");
        }
    }
}

#[test]
fn a_leaf_twice_in_one_operation_is_recorded_as_the_loop_records_it() {
    let values: Vec<f64> = (0..10)
        .map(|i| 0.3 + 0.5 * (i as f64 * 1.37).sin())
        .collect();
    let plain = |x: &[f64]| {
        let y = x.iter().map(|v| (v * v) * (v * v));
        let z = x.iter().map(|v| v * v + 1.0);
        y.sum::<f64>() + z.sum::<f64>()
    };
    check_elements(&values, 1, squares, squares, plain);
}

#[test]
fn a_term_that_panics_in_a_block_keeping_one_partial() {
    // Panicking at 40 of 100, the block keeps 40 terms and the partial term 0 wrote; at 0, no
    // term and no partial (the block is dropped, and the sum, reading `x`'s nodes, is whole).
    let values: Vec<f64> = (0..100).map(|i| 0.02 * i as f64 - 0.7).collect();
    let d: Vec<f64> = (0..100).map(|i| 0.5 - 0.01 * i as f64).collect();
    for (at, whole, blocks, same) in [(40, 1, 1, 1), (0, 2, 0, 1)] {
        let f = |x: &[Var]| caught_same(x, &d[..at]);
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let (value, gradient, _, loops) = on_tape(&values, None, &[], f);
        let (value_by_term, gradient_by_term, _, _) = on_tape_as(true, &values, None, &[], f);
        let tape = Tape::new();
        let _ = f(&values.iter().map(|&v| tape.var(v)).collect::<Vec<Var>>());
        let plain = caught_same(&values, &d[..at]);
        std::panic::set_hook(previous);
        assert_eq!(
            (
                ad::__private::loops_as_runs(&tape),
                ad::__private::same_partials(&tape)
            ),
            (blocks, same)
        );
        drop(tape);
        assert_eq!(loops, whole);
        assert_eq!(value.to_bits(), value_by_term.to_bits());
        assert_eq!(value.to_bits(), plain.to_bits());
        assert_eq!(bits(&gradient), bits(&gradient_by_term));
        for (i, (g, v)) in gradient.iter().zip(&values).enumerate() {
            let expected = if i < at {
                6.0 * (3.0 * v + d[i])
            } else {
                2.0 * v
            };
            assert_eq!(*g, expected, "{i}");
        }
    }
}

#[test]
fn a_term_that_panics_leaves_the_elements_written_recorded() {
    // At 10 elements, panicking at 5, the loop is recorded a node at a time; at 100, panicking
    // at 40, it is kept as a block of the 40 terms written.
    for (len, at, blocks) in [(10, 5, 0), (100, 40, 1)] {
        let values: Vec<f64> = (0..len).map(|i| 0.2 * i as f64 - 0.7).collect();
        // y[i] = (10 / (at - i)) x[i] + 1 for i < at, x[i] after.
        let factor = |i: usize| if i < at { (10 / (at - i)) as f64 } else { 1.0 };
        let plain = |x: &[f64]| {
            x.iter()
                .enumerate()
                .map(|(i, v)| if i < at { v * factor(i) + 1.0 } else { *v })
                .map(|y| y * y)
                .fold(0.0, |total, term| total + term)
        };
        let f = |x: &[Var]| caught(x, at);
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let (value, gradient, _, loops) = on_tape(&values, None, &[], f);
        let (value_by_term, gradient_by_term, _, _) = on_tape_as(true, &values, None, &[], f);
        let tape = Tape::new();
        let x: Vec<Var> = values.iter().map(|&v| tape.var(v)).collect();
        let _ = f(&x);
        std::panic::set_hook(previous);
        assert_eq!(ad::__private::loops_as_runs(&tape), blocks);
        drop(tape);
        // The element loop (the sum's `y` is not a run: new nodes, then `x`'s).
        assert_eq!(loops, 1);
        assert_eq!(value.to_bits(), value_by_term.to_bits());
        assert_eq!(value.to_bits(), plain(&values).to_bits());
        assert_eq!(bits(&gradient), bits(&gradient_by_term));
        for (i, (g, v)) in gradient.iter().zip(&values).enumerate() {
            let y = if i < at { v * factor(i) + 1.0 } else { *v };
            assert_eq!(*g, 2.0 * y * factor(i), "{i}");
        }
    }
}

#[test]
#[should_panic(expected = "index out of bounds: the len is 9 but the index is 9")]
fn an_element_written_past_its_slice_panics_as_the_function_does() {
    let x: Vec<f64> = (0..10).map(f64::from).collect();
    let _ = stages_short_grad(&x);
}

#[test]
fn elements_inside_longer_sums_of_the_index_are_recorded_whole() {
    let values: Vec<f64> = (0..52)
        .map(|i| 0.3 * (i as f64 * 0.83).sin() + 0.1)
        .collect();
    let (n, r, k) = (12, 2, 3);
    let sums = |v: &[f64]| {
        let (a, x) = split(v, 36);
        let mut total = 0.0;
        for j in 0..n - 1 {
            total += a[n * r + j + 1] * x[1 + k + j] - x[k + (j + 2)];
        }
        (1..n).fold(total, |total, j| total + a[j] * x[j + k - 1])
    };
    check(
        &values,
        1,
        |v| sums_of_offsets(&v[..36], &v[36..], n, r, k),
        |v| sums_of_offsets(&v[..36], &v[36..], n, r, k),
        sums,
    );
    // `y[j + k + 1]` for each `j`, after `k + 1` zeros that do not change the sum.
    let writes = |v: &[f64]| {
        let (a, x) = split(v, 36);
        let element = |j: usize| {
            let first = x[j] * a[j + n * r];
            if j + 1 < n {
                first + a[n * r + j + 1] * x[1 + k + j]
            } else {
                first
            }
        };
        (0..n).map(element).sum::<f64>()
    };
    check_elements(
        &values,
        2,
        |v| writes_at_offsets(&v[..36], &v[36..], n, r, k),
        |v| writes_at_offsets(&v[..36], &v[36..], n, r, k),
        writes,
    );
}

#[test]
fn long_loops_are_kept_as_runs_with_the_same_record() {
    let n = 300;
    let mut values: Vec<f64> = (0..n).map(|i| 0.5 * (i as f64 * 0.37).sin()).collect();
    values.push(0.2);
    let w: Vec<f64> = (0..n).map(|i| 0.01 * i as f64 - 1.0).collect();
    let plain = |v: &[f64]| {
        let (x, c) = (&v[..n], v[n]);
        let mut first = 0.0;
        for i in 0..n - 2 {
            first += x[i + 2] * x[i] - (x[i + 1] - c).sin() * w[i];
        }
        let second = x.iter().fold(0.0, |total, a| total - a * (x[7] + 0.25));
        let mut third = x.iter().fold(0.0, |total, a| total + (a - c) * (a - c));
        third += x[0] * c;
        third = x
            .windows(2)
            .zip(&w[1..])
            .fold(third, |t, (p, w)| t + p[0] * w);
        first * 0.5 + second.sin() + third.sqrt()
    };
    let f = |v: &[Var]| long_sums(&v[..n], &w, v[n], 7);
    check(&values, 4, f, |v| long_sums(&v[..n], &w, v[n], 7), plain);
    // The four loops as runs (the second's `m` is one of its run's nodes); the fourth adds to
    // a sum that holds a slot already, kept before its runs and swept first.
    assert_eq!(loops_kept(&values, f), (4, 4));
    // Of those, the second and third in lanes: the first's term calls `sin`.
    assert_eq!(loops_in_lanes(&values, f), 2);
    // Short loops (fewer than 128 operands) are slots.
    let short: Vec<f64> = values[..30].iter().chain([&0.2]).copied().collect();
    let short_sums = |x: &[Var]| long_sums(&x[..30], &w, x[30], 7);
    assert_eq!(loops_kept(&short, short_sums), (4, 0));
}

#[test]
fn terms_of_lane_by_lane_operations_are_computed_in_lanes() {
    // Even and odd counts: every term in a pair, or the last alone.
    for n in [300, 301] {
        let mut values: Vec<f64> = (0..n).map(|i| 0.5 * (i as f64 * 0.37).sin()).collect();
        values.push(0.2);
        let s = 0.75;
        let plain = |v: &[f64]| {
            let (x, c) = (&v[..n], v[n]);
            let first = x.windows(2).fold(0.0, |t, p| {
                let (d, e) = (p[1] - p[0] * p[0], 1.0 - p[0]);
                t + (100.0 * (d * d) + e * e)
            });
            let second = x
                .windows(3)
                .fold(1.0, |t, p| t - (p[0] - s * c) / (p[2] * p[2] + 1.0));
            let third = x.iter().fold(0.0, |t, a| t + (-(a * c) + s));
            let fourth = x.windows(2).fold(0.0, |t, p| t + (p[1] - p[0]).sin() * c);
            first + second * third + fourth
        };
        let f = |v: &[Var]| in_lanes(&v[..n], v[n], s);
        check(&values, 4, f, |v| in_lanes(&v[..n], v[n], s), plain);
        // Four loops kept as runs; all but the one with `sin` in lanes.
        assert_eq!(loops_kept(&values, f), (4, 4));
        assert_eq!(loops_in_lanes(&values, f), 3);
        // Short loops (fewer than 128 operands) are slots, one term at a time.
        let short: Vec<f64> = values[..30].iter().chain([&0.2]).copied().collect();
        let short_sums = |x: &[Var]| in_lanes(&x[..30], x[30], s);
        assert_eq!(loops_kept(&short, short_sums), (4, 0));
        assert_eq!(loops_in_lanes(&short, short_sums), 0);
    }
}

#[test]
fn elements_of_lane_by_lane_operations_are_computed_in_lanes() {
    // Odd and even counts (`a` writes `n - 1` elements, the others `n`): every element in a
    // pair, or the last alone.
    for n in [300, 301] {
        let mut values: Vec<f64> = (0..n).map(|i| 0.5 * (i as f64 * 0.37).sin()).collect();
        values.push(0.2);
        let plain = |v: &[f64]| weighted(&element_lanes_by_hand(&v[..n], v[n]));
        let f = |v: &[Var]| weighted(&element_lanes(&v[..n], v[n]));
        let dual = |v: &[Dual<f64>]| weighted(&element_lanes(&v[..n], v[n]));
        check_elements(&values, 6, f, dual, plain);
        assert_eq!(loops_in_lanes(&values, f), 3);
        // Shorter than a block (32 elements): one element at a time.
        let short: Vec<f64> = values[..20].iter().chain([&0.2]).copied().collect();
        let plain = |v: &[f64]| weighted(&element_lanes_by_hand(&v[..20], v[20]));
        let f = |v: &[Var]| weighted(&element_lanes(&v[..20], v[20]));
        let dual = |v: &[Dual<f64>]| weighted(&element_lanes(&v[..20], v[20]));
        check_elements(&short, 6, f, dual, plain);
        assert_eq!(loops_in_lanes(&short, f), 0);
    }
}

#[test]
fn lanes_beside_a_leaf_of_constants_agree_with_term_by_term() {
    let n = 257;
    let values: Vec<f64> = (0..2 * n).map(|i| (i as f64 * 0.61).cos()).collect();
    let f = |v: &[Var]| pairs(&v[..n], &v[n..]);
    // `y` constants: `x` alone has nodes.
    let constants: Vec<usize> = (n..2 * n).collect();
    let (value, gradient, nodes, loops) = on_tape(&values, None, &constants, f);
    assert_eq!(loops, 1);
    let mut order: Vec<usize> = (0..n).rev().collect();
    order.extend(n..2 * n);
    let (value_by_term, gradient_by_term, nodes_by_term, loops_by_term) =
        on_tape(&values, Some(&order), &constants, f);
    assert_eq!(loops_by_term, 0);
    assert_eq!(value.to_bits(), value_by_term.to_bits());
    assert_eq!(nodes, nodes_by_term);
    assert_eq!(bits(&gradient), bits(&gradient_by_term));
    let plain = pairs::<f64>(&values[..n], &values[n..]);
    assert_eq!(value.to_bits(), plain.to_bits());
    let dual = by_dual(&values, |v| {
        let held = held_constant(v, &constants);
        pairs(&held[..n], &held[n..])
    });
    for (a, b) in gradient.iter().zip(&dual) {
        assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} against {b}");
    }
    let tape = Tape::new();
    let x: Vec<Var> = values[..n].iter().map(|&v| tape.var(v)).collect();
    let y: Vec<Var> = values[n..].iter().map(|&v| Var::constant(v)).collect();
    let _ = pairs(&x, &y);
    assert_eq!(ad::__private::loops_in_lanes(&tape), 1);
}

#[test]
fn a_counter_the_term_reads_keeps_it_one_term_at_a_time() {
    // An even count, which lanes would have taken whole.
    let n = 128;
    let values: Vec<f64> = (0..2 * n).map(|i| 1.0 + 0.01 * i as f64).collect();
    let plain = |v: &[f64]| {
        let (x, y) = v.split_at(n);
        let total = x.iter().zip(y).fold(0.0, |t, (a, b)| t + (a * b - a));
        total * y[n - 1] + n as f64
    };
    let f = |v: &[Var]| counted_lanes(&v[..n], &v[n..]);
    check(&values, 1, f, |v| counted_lanes(&v[..n], &v[n..]), plain);
    assert_eq!(loops_kept(&values, f), (1, 1));
    assert_eq!(loops_in_lanes(&values, f), 0);
}

/// How many loops `f` over `values` (seeded in order) computed in lanes.
fn loops_in_lanes<R>(values: &[f64], f: impl Fn(&[Var]) -> R) -> usize {
    let tape = Tape::new();
    let _ = f(&values.iter().map(|&v| tape.var(v)).collect::<Vec<Var>>());
    ad::__private::loops_in_lanes(&tape)
}

/// How many loops `f` records whole on a tape seeded with `values` in order, and how many of
/// those it keeps as runs or blocks.
fn loops_kept<R>(values: &[f64], f: impl Fn(&[Var]) -> R) -> (usize, usize) {
    let tape = Tape::new();
    let x: Vec<Var> = values.iter().map(|&v| tape.var(v)).collect();
    let _ = f(&x);
    let whole = ad::__private::whole_loops(&tape);
    (whole, ad::__private::loops_as_runs(&tape))
}

/// How many leaves `f` over `values` took as the arrays it holds knew them.
fn leaves_known<R>(values: &[f64], f: impl Fn(&[Var]) -> R) -> usize {
    let tape = Tape::new();
    let _ = f(&values.iter().map(|&v| tape.var(v)).collect::<Vec<Var>>());
    ad::__private::known_leaves(&tape)
}

/// `Σ wᵢ (i + 1)` over the elements [`long_elements`] returns, added one by one.
fn weighted<S: Copy + std::ops::Add<Output = S> + std::ops::Mul<f64, Output = S>>(w: &[S]) -> S {
    let mut total = w[0];
    for (i, &e) in w.iter().enumerate().skip(1) {
        total = total + e * (i + 1) as f64;
    }
    total
}

#[test]
fn partials_the_same_in_every_term_are_kept_once() {
    let n = 40;
    let values: Vec<f64> = (0..n).map(|i| 0.5 * (i as f64 * 0.37).sin()).collect();
    let w: Vec<f64> = (0..n).map(|i| 1.5 + 0.01 * i as f64).collect();
    for s in [1, 3] {
        let f = |x: &[Var]| weighted(&same_partials(x, &w, 0.75, s));
        let plain = |x: &[f64]| weighted(&same_partials(x, &w, 0.75, s));
        let dual = |x: &[Dual<f64>]| weighted(&same_partials(x, &w, 0.75, s));
        check_elements(&values, 6, f, dual, plain);
        assert_eq!(loops_kept(&values, f), (6, 6));
        let tape = Tape::new();
        let _ = f(&values.iter().map(|&v| tape.var(v)).collect::<Vec<Var>>());
        assert_eq!(ad::__private::same_partials(&tape), 2 + 1 + 2 + 1);
    }
    // `stages`' last loop, `y[i] += h * (k1[i] + k2[i]) / 2.0`: all three leaves.
    let values: Vec<f64> = (0..120).map(|i| 0.3 + 0.005 * i as f64).collect();
    let tape = Tape::new();
    let _ = stages(
        &values.iter().map(|&v| tape.var(v)).collect::<Vec<Var>>(),
        2,
    );
    assert_eq!(ad::__private::same_partials(&tape), 3 * 2);
}

#[test]
fn long_element_loops_are_kept_as_blocks_with_the_same_record() {
    let n = 200;
    let mut values: Vec<f64> = (0..n).map(|i| 0.5 * (i as f64 * 0.37).sin()).collect();
    values.push(0.2);
    let d: Vec<f64> = (0..n).map(|i| 0.01 * i as f64 - 1.0).collect();
    for k in [7, 0, n - 1] {
        let f = |v: &[Var]| weighted(&long_elements(&v[..n], &d, v[n], k));
        let plain = |v: &[f64]| weighted(&long_elements(&v[..n], &d, v[n], k));
        let dual = |v: &[Dual<f64>]| weighted(&long_elements(&v[..n], &d, v[n], k));
        check_elements(&values, 6, f, dual, plain);
        // All but `u`'s loop as blocks: it reads `m`, one of `x`'s nodes, in every term.
        assert_eq!(loops_kept(&values, f), (6, 5));
    }
    // One slice as the three leaves of `trio`.
    let f = |v: &[Var]| weighted(&trio(v, v, v));
    let plain = |v: &[f64]| weighted(&trio(v, v, v));
    check_elements(&values, 1, f, |v| weighted(&trio(v, v, v)), plain);
    assert_eq!(loops_kept(&values, f), (1, 1));
    // Short loops (fewer than 32 terms) are slots.
    let short: Vec<f64> = values[..20].iter().chain([&0.2]).copied().collect();
    let short_loops = |x: &[Var]| long_elements(&x[..20], &d, x[20], 7);
    assert_eq!(loops_kept(&short, short_loops), (6, 0));
}

#[test]
fn a_scalar_that_is_a_node_of_the_run_takes_its_additions_in_order() {
    // `second`'s loop reads `m = x[7]` in every term and `x[7]` itself in term 7: that node's
    // additions are made term by term, the run's among them in leaf order. Two hundred points,
    // each bit for bit against the loop recorded as slots (an order swapped within term 7
    // shows at a few of them).
    let n = 300;
    let w: Vec<f64> = (0..n).map(|i| 0.01 * i as f64 - 1.0).collect();
    let f = |v: &[Var]| long_sums(&v[..n], &w, v[n], 7);
    let reversed: Vec<usize> = (0..=n).rev().collect();
    for seed in 0..200 {
        let values: Vec<f64> = (0..=n)
            .map(|i| 0.5 * ((i * 7 + seed) as f64 * 0.37).sin())
            .collect();
        let (_, gradient, _, _) = on_tape(&values, None, &[], f);
        let (_, slots, _, _) = on_tape(&values, Some(&reversed), &[], f);
        assert_eq!(gradient[7].to_bits(), slots[7].to_bits(), "at seed {seed}");
        assert_eq!(bits(&gradient), bits(&slots), "at seed {seed}");
    }
}

#[test]
fn two_scalars_of_one_node_inside_the_run_take_their_additions_in_order() {
    let reversed: Vec<usize> = (0..300).rev().collect();
    for (seed, k) in (0..40).zip([0, 7, 150, 299].into_iter().cycle()) {
        let values: Vec<f64> = (0..300)
            .map(|i| 0.5 * ((i * 5 + seed) as f64 * 0.41).cos())
            .collect();
        let plain = |x: &[f64]| {
            let (m, p) = (x[k], x[k]);
            x.iter()
                .fold(0.0, |total, a| total + (a * m - p * (a + 1.5) * 0.5))
        };
        if seed < 4 {
            check(&values, 1, |x| twins(x, k), |x| twins(x, k), plain);
        }
        assert_eq!(loops_kept(&values, |x| twins(x, k)), (1, 1));
        let (_, gradient, _, _) = on_tape(&values, None, &[], |x| twins(x, k));
        let (_, slots, _, _) = on_tape(&values, Some(&reversed), &[], |x| twins(x, k));
        assert_eq!(bits(&gradient), bits(&slots), "at seed {seed}, k = {k}");
    }
}

#[test]
fn long_loops_of_the_other_forms_are_kept_as_runs() {
    let values: Vec<f64> = (0..600).map(|i| 0.4 * (i as f64 * 0.61).cos()).collect();
    let w: Vec<f64> = (0..600).map(|i| 0.002 * i as f64).collect();
    let runs = |f: &dyn Fn(&[Var]) -> Var| loops_kept(&values, f).1;
    // A distance, neighbours (with a start that is not zero), items, an enumerate, matrix rows.
    let (x, y) = split(&values, 300);
    check(
        &values,
        1,
        |v| distance(&v[..300], &v[300..]),
        |v| distance(&v[..300], &v[300..]),
        |v| {
            let (x, y) = split(v, 300);
            x.iter()
                .zip(y)
                .fold(0.0, |total, (a, b)| total + (a - b) * (a - b))
        },
    );
    assert_eq!(runs(&|v| distance(&v[..300], &v[300..])), 1);
    assert_eq!(distance_grad(x, y).0, distance(x, y));
    check(
        &values,
        1,
        |x| neighbours(x, &w, 3),
        |x| neighbours(x, &w, 3),
        |x| neighbours_by_hand(x, &w, 3),
    );
    assert_eq!(runs(&|x| neighbours(x, &w, 3)), 1);
    let items_plain = |v: &[f64]| {
        let (x, y) = (&v[..299], &v[299..598]);
        let c = v[598];
        x.iter()
            .zip(y)
            .zip(&w)
            .fold(0.0, |total, ((a, b), v)| total + (a - c) * b * v)
    };
    let items_on = |v: &[Var]| items(&v[..299], &v[299..598], &w, v[598]);
    check(
        &values,
        1,
        items_on,
        |v| items(&v[..299], &v[299..598], &w, v[598]),
        items_plain,
    );
    assert_eq!(runs(&items_on), 1);
    check(
        &values,
        1,
        |v| enumerated(&v[..299], &v[300..]),
        |v| enumerated(&v[..299], &v[300..]),
        |v| (0..299).fold(0.0, |total, j| total + v[j] * v[300 + j + 1]),
    );
    assert_eq!(runs(&|v| enumerated(&v[..299], &v[300..])), 1);
    // Matrix rows: 29 rows of 20 are short loops, kept as slots; one row of 300 is a run of
    // `a` and all of `x`.
    let rows_plain = |v: &[f64], n: usize| {
        let (a, x) = split(v, 600 - n);
        (0..a.len() / n).fold(0.0, |total, i| {
            let row = (0..n).fold(0.0, |row, j| row + a[i * n + j] * x[j]);
            total + f64::tanh(row)
        })
    };
    for (n, whole, kept) in [(20, 29, 0), (300, 1, 1)] {
        let rows_on = |v: &[Var]| rows(&v[..600 - n], &v[600 - n..]);
        check(
            &values,
            whole,
            rows_on,
            |v| rows(&v[..600 - n], &v[600 - n..]),
            |v| rows_plain(v, n),
        );
        assert_eq!(runs(&rows_on), kept);
    }
    // The mapped sum of `log_sum_exp` reads its largest value, one of its run's nodes.
    check(&values, 1, log_sum_exp, log_sum_exp, |v| {
        let largest = v.iter().copied().fold(v[0], f64::max);
        largest + v.iter().map(|x| (x - largest).exp()).sum::<f64>().ln()
    });
    assert_eq!(runs(&log_sum_exp), 1);
}

/// Writes one element past `y`.
#[reverse_diff]
fn stages_short(x: &[f64]) -> f64 {
    let mut y = vec![0.0; x.len() - 1];
    for i in 0..x.len() {
        y[i] = x[i] * 2.0;
    }
    y[0]
}

/// One direction of forward mode (0 at the `constants`): `Σᵢ gᵢ dᵢ` of `gradient` against the
/// tangent of `f` along `d`.
fn along_a_direction(
    values: &[f64],
    constants: &[usize],
    gradient: &[f64],
    f: impl Fn(&[Dual<f64>]) -> Dual<f64>,
) -> Result<(), TestCaseError> {
    let direction: Vec<f64> = (0..values.len())
        .map(|i| {
            if constants.contains(&i) {
                0.0
            } else {
                ((i * 7) % 11) as f64 - 5.0
            }
        })
        .collect();
    let duals: Vec<Dual<f64>> = values
        .iter()
        .zip(&direction)
        .map(|(&v, &d)| Dual::new(v, d))
        .collect();
    let tangent = f(&duals).tangent;
    let along: f64 = gradient.iter().zip(&direction).map(|(g, d)| g * d).sum();
    prop_assert!(
        (along - tangent).abs() <= 1e-9 * tangent.abs().max(1.0),
        "{} against {}",
        along,
        tangent
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random lengths, starts, values and seeding orders (some in order, some not, some inputs
    /// constant): the value and the gradient are those of the term-by-term record and of
    /// forward mode.
    #[test]
    fn random_loops_agree_with_term_by_term_and_forward_mode(
        values in prop::collection::vec(-1.5f64..1.5, 2..30),
        low in 0usize..6,
        shuffle in any::<bool>(),
        constant in prop::option::of(0usize..24),
    ) {
        let w: Vec<f64> = values.iter().map(|v| 0.3 * v + 0.1).collect();
        let low = low.min(values.len() - 1);
        let mut order: Vec<usize> = (0..values.len()).collect();
        if shuffle {
            order.swap(0, values.len() - 1);
        }
        let constants: Vec<usize> = constant.into_iter().collect();
        let f = |x: &[Var]| neighbours(x, &w, low) + local(x) + log_sum_exp(x);
        let (value, gradient, _, loops) = on_tape(&values, Some(&order), &constants, f);
        if !shuffle && constants.iter().all(|&c| c >= values.len()) {
            // In order, every loop of at least 8 terms is recorded whole.
            let long = |terms: usize| usize::from(terms >= 8);
            let n = values.len();
            prop_assert_eq!(loops, long(n - 1 - low) + 2 * long(n));
        }
        let (value_by_term, gradient_by_term, _, _) = on_tape(
            &values,
            Some(&(0..values.len()).rev().collect::<Vec<_>>()),
            &constants,
            f,
        );
        prop_assert_eq!(value.to_bits(), value_by_term.to_bits());
        prop_assert_eq!(bits(&gradient), bits(&gradient_by_term));
        let dual = by_dual(&values, |x| {
            let x = held_constant(x, &constants);
            neighbours(&x, &w, low) + local(&x) + log_sum_exp(&x)
        });
        for (a, b) in gradient.iter().zip(&dual) {
            prop_assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{} against {}", a, b);
        }
    }
    /// Random lengths (empty, short, long), values, points, seeding orders and constants
    /// through loops that advance scalars after their term: the value and the gradient are
    /// those of the loops as written, bit for bit, and of forward mode; the loops are recorded
    /// whole when seeded in order, and never when the point is differentiable.
    #[test]
    fn random_loops_that_advance_scalars_agree_with_the_loops_as_written(
        values in prop::collection::vec(-1.5f64..1.5, 1..60),
        t in -1.2f64..1.2,
        shuffle in any::<bool>(),
        constant in prop::option::of(0usize..60),
    ) {
        let n = values.len();
        let mut order: Vec<usize> = (0..n).collect();
        if shuffle {
            order.swap(0, n - 1);
        }
        let constants: Vec<usize> = constant.into_iter().collect();
        let f = |c: &[Var]| power_series(c, t) + advanced(c, t) + advanced_apart(c, Var::constant(t));
        let (value, gradient, nodes, loops) = on_tape(&values, Some(&order), &constants, f);
        if !shuffle && constants.iter().all(|&c| c >= n) {
            // In order, the loop sums of 8 terms or more are recorded whole, and the element
            // loop too (its leaves' elements need not be consecutive); `advanced_apart`'s
            // power series at a constant point too.
            let long = usize::from(n >= 8);
            prop_assert_eq!(loops, 3 * long);
        }
        let reversed: Vec<usize> = (0..n).rev().collect();
        for (term_by_term, order) in [(true, None), (false, Some(&reversed[..]))] {
            let (value_by_term, gradient_by_term, nodes_by_term, _) =
                on_tape_as(term_by_term, &values, order, &constants, f);
            prop_assert_eq!(value.to_bits(), value_by_term.to_bits());
            prop_assert_eq!(nodes, nodes_by_term);
            prop_assert_eq!(bits(&gradient), bits(&gradient_by_term));
        }
        let dual = by_dual(&values, |c| {
            let c = held_constant(c, &constants);
            power_series(&c, t) + advanced(&c, t) + advanced_apart(&c, Dual::new(t, 0.0))
        });
        for (a, b) in gradient.iter().zip(&dual) {
            prop_assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{} against {}", a, b);
        }
        // At a differentiable point, the power series runs as written.
        let mut with_point = values.clone();
        with_point.push(t);
        let (_, _, _, loops) = on_tape(&with_point, None, &[], |v| advanced_apart(&v[..n], v[n]));
        prop_assert_eq!(loops, 0);
    }

    /// Random long lengths, values, seeding orders and constants through loop sums long enough
    /// to be kept as runs (overlapping neighbours, a scalar inside or outside the run, a sum
    /// that goes on after its loop): the value and the gradient are those of the same loops
    /// recorded term by term, bit for bit, and agree with forward mode along a direction.
    #[test]
    fn random_long_loops_agree_with_term_by_term_and_forward_mode(
        values in prop::collection::vec(-1.5f64..1.5, 40..400),
        k in 0usize..40,
        low in 0usize..6,
        shuffle in any::<bool>(),
        constant in prop::option::of(0usize..400),
    ) {
        let n = values.len() - 1;
        let w: Vec<f64> = values.iter().map(|v| 0.3 * v + 0.1).collect();
        let mut order: Vec<usize> = (0..values.len()).collect();
        if shuffle {
            order.swap(0, n);
        }
        let constants: Vec<usize> = constant.into_iter().collect();
        let k = k % n;
        let f = |v: &[Var]| long_sums(&v[..n], &w, v[n], k) + neighbours(&v[..n], &w, low);
        let (value, gradient, nodes, _) = on_tape(&values, Some(&order), &constants, f);
        let reversed: Vec<usize> = (0..values.len()).rev().collect();
        let (value_by_term, gradient_by_term, nodes_by_term, _) =
            on_tape(&values, Some(&reversed), &constants, f);
        prop_assert_eq!(value.to_bits(), value_by_term.to_bits());
        prop_assert_eq!(nodes, nodes_by_term);
        prop_assert_eq!(bits(&gradient), bits(&gradient_by_term));
        along_a_direction(&values, &constants, &gradient, |v| {
            long_sums(&v[..n], &w, v[n], k) + neighbours(&v[..n], &w, low)
        })?;
    }

    /// Random long lengths, values, seeding orders and constants through element loops long
    /// enough to be kept as blocks, some keeping one partial for a leaf ([`same_partials`]):
    /// the value, the node count and the gradient are those of the same loops recorded term by
    /// term, bit for bit, and agree with forward mode along a direction.
    #[test]
    fn random_long_element_loops_agree_with_term_by_term_and_forward_mode(
        values in prop::collection::vec(-1.5f64..1.5, 40..300),
        k in 0usize..300,
        seeding in 0usize..3,
        constant in prop::option::of(0usize..300),
    ) {
        let n = values.len() - 1;
        let d: Vec<f64> = values.iter().map(|v| 0.3 * v + 0.1).collect();
        let w: Vec<f64> = (0..n).map(|i| 1.5 + 0.01 * i as f64).collect();
        let k = k % n;
        // In order; the first and last swapped (runs broken at both ends); reversed (every
        // element its own run: slots).
        let mut order: Vec<usize> = (0..values.len()).collect();
        match seeding {
            1 => order.swap(0, n),
            2 => order.reverse(),
            _ => {}
        }
        let constants: Vec<usize> = constant.into_iter().collect();
        let f = |v: &[Var]| {
            weighted(&long_elements(&v[..n], &d, v[n], k))
                + stages(&v[..n], 2)[n - 1]
                + weighted(&trio(&v[..n], &v[..n], &v[..n]))
                + weighted(&same_partials(&v[..n], &w, 0.75, 2))
        };
        let (value, gradient, nodes, _) = on_tape(&values, Some(&order), &constants, f);
        let (value_by_term, gradient_by_term, nodes_by_term, _) =
            on_tape_as(true, &values, Some(&order), &constants, f);
        prop_assert_eq!(value.to_bits(), value_by_term.to_bits());
        prop_assert_eq!(nodes, nodes_by_term);
        prop_assert_eq!(bits(&gradient), bits(&gradient_by_term));
        along_a_direction(&values, &constants, &gradient, |v| {
            weighted(&long_elements(&v[..n], &d, v[n], k))
                + stages(&v[..n], 2)[n - 1]
                + weighted(&trio(&v[..n], &v[..n], &v[..n]))
                + weighted(&same_partials(&v[..n], &w, 0.75, 2))
        })?;
    }

    /// Random lengths, offsets, values, seeding orders and constants through element loops:
    /// the value and the gradient are those of the same loops recorded term by term, bit for
    /// bit, and of forward mode.
    #[test]
    fn random_element_loops_agree_with_term_by_term_and_forward_mode(
        values in prop::collection::vec(-1.5f64..1.5, 1..30),
        low in 0usize..4,
        shuffle in any::<bool>(),
        constant in prop::option::of(0usize..24),
    ) {
        let low = low.min(values.len() - 1);
        let mut order: Vec<usize> = (0..values.len()).collect();
        if shuffle {
            order.reverse();
        }
        let constants: Vec<usize> = constant.into_iter().collect();
        let f = |x: &[Var]| element_loops(x, low);
        let (value, gradient, nodes, loops) = on_tape(&values, Some(&order), &constants, f);
        if low == 0 && constants.iter().all(|&c| c >= values.len()) {
            // Every leaf of every loop a node: every loop of at least 8 terms whole (`z`'s
            // over `1..n`, the others over `0..n`), the sum too, whose slices are runs in any
            // seeding order (the loops wrote them).
            let long = |terms: usize| usize::from(terms >= 8);
            let n = values.len();
            prop_assert_eq!(loops, 5 * long(n) + long(n - 1));
        }
        let (value_by_term, gradient_by_term, nodes_by_term, loops_by_term) =
            on_tape_as(true, &values, Some(&order), &constants, f);
        // Element by element, `w` and `y` may still be runs: only the sum may be whole.
        prop_assert!(loops_by_term <= 1);
        prop_assert_eq!(value.to_bits(), value_by_term.to_bits());
        prop_assert_eq!(nodes, nodes_by_term);
        prop_assert_eq!(bits(&gradient), bits(&gradient_by_term));
        let dual = by_dual(&values, |x| {
            let x = held_constant(x, &constants);
            element_loops(&x, low)
        });
        for (a, b) in gradient.iter().zip(&dual) {
            prop_assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{} against {}", a, b);
        }
    }
}

/// Neighbours three apart in a loop sum and two apart in an element loop, over a slice.
#[reverse_diff]
fn stencils(x: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    for i in 0..n - 3 {
        total += x[i + 3] * x[i];
    }
    let mut products = vec![0.0; n - 2];
    for i in 0..n - 2 {
        products[i] = x[i + 2] * x[i + 1];
    }
    for i in 0..n - 2 {
        total += products[i] * (i + 1) as f64;
    }
    total
}

/// A slice its companion seeds is known to the tape as a run of nodes from the seeding, until
/// it is handed back, so its loops are kept as runs and blocks with no check of its elements:
/// `stencils`' record over a seeded slice is the record over the same nodes made one by one
/// (each loop's leaves then checked element by element), bit for bit, and its gradient is the
/// analytic one, at every offset.
#[test]
fn loops_over_a_seeded_slice_are_runs_found_from_the_seeding() {
    // The tape's companions, which this test is about (the macro writes the adjoints of
    // some of these bodies out: tests/written_adjoints.rs).
    ad::__private::set_generated_adjoints(false);
    let n = 200;
    let values: Vec<f64> = (0..n)
        .map(|i| 0.5 + 0.3 * (i as f64 * 0.37).sin())
        .collect();
    let sweep = |tape: &Tape, x: &[Var]| {
        let total = stencils(x);
        let counts = (
            ad::__private::whole_loops(tape),
            ad::__private::loops_as_runs(tape),
        );
        tape.backward(total);
        (total.value(), tape.with_adjoints(|a| a.get_all(x)), counts)
    };
    let seeded_run = {
        let tape = Tape::new();
        let seeded = ad::__private::seed_lent::<[f64]>(&tape, &values);
        let run = sweep(&tape, &seeded);
        ad::__private::recycle::<[f64]>(seeded);
        run
    };
    let one_by_one = {
        let tape = Tape::new();
        let x: Vec<Var> = values.iter().map(|&v| tape.var(v)).collect();
        sweep(&tape, &x)
    };
    // Three loops recorded whole; both loop sums kept as runs (the second after the slot of
    // the sum it adds to) and the element loop as a block.
    assert_eq!(seeded_run.2, (3, 3));
    assert_eq!(one_by_one.2, (3, 3));
    assert_eq!(seeded_run.0.to_bits(), one_by_one.0.to_bits());
    let bits = |g: &[f64]| g.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&seeded_run.1), bits(&one_by_one.1));
    let x = &values;
    for (j, &g) in seeded_run.1.iter().enumerate() {
        let mut expected = 0.0;
        if j >= 3 {
            expected += x[j - 3];
        }
        if j + 3 < n {
            expected += x[j + 3];
        }
        if j >= 2 {
            expected += (j - 1) as f64 * x[j - 1];
        }
        if j >= 1 && j + 1 < n {
            expected += j as f64 * x[j + 1];
        }
        assert!(
            (g - expected).abs() <= 1e-12 * expected.abs().max(1.0),
            "{j}: {g} against {expected}"
        );
    }
    assert_eq!(stencils_grad(&values).1, seeded_run.1);
}

/// A slice seeded outside a companion (`ad::__private::seed`, or `Differentiable::seed`) is
/// its owner's to change, so the tape does not remember it: two elements swapped after
/// seeding, the loop over it still passes each adjoint to the node it read.
#[test]
fn a_slice_seeded_outside_a_companion_is_checked_element_by_element() {
    let n = 40;
    let values: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let tape = Tape::new();
    let mut seeded = ad::__private::seed::<[f64]>(&tape, &values);
    seeded.swap(5, 6);
    let total = distance(&seeded, &vec![Var::constant(0.0); n]);
    tape.backward(total);
    // d/dx (Σ x²) = 2x at each element's own node.
    let gradient: Vec<f64> = seeded.iter().map(|&x| tape.adjoint(x)).collect();
    let expected: Vec<f64> = seeded.iter().map(|x| 2.0 * x.value()).collect();
    assert_eq!(gradient, expected);
}

#[test]
fn loops_that_advance_constant_scalars_are_recorded_whole() {
    for n in [8, 40] {
        let values: Vec<f64> = (0..n)
            .map(|i| 0.3 + 0.05 * (i as f64 * 1.7).sin())
            .collect();
        for t in [0.9, -1.25] {
            check(
                &values,
                1,
                |c| power_series(c, t),
                |c| power_series(c, t),
                |c| power_series_by_hand(c, t),
            );
            check_elements(
                &values,
                1,
                |c| advanced(c, t),
                |c| advanced(c, t),
                |c| advanced_by_hand(c, t),
            );
        }
    }
}

#[test]
fn llsq_residuals_are_recorded_whole() {
    let values: Vec<f64> = (0..12).map(|i| 0.2 - 0.03 * i as f64).collect();
    let plain = |x: &[f64]| {
        let n = 9;
        let mut total = 0.0;
        for i in 0..n {
            let t = -1.0 + i as f64 * 2.0 / (n as f64 - 1.0);
            let fitted = x.iter().rev().fold(0.0, |sum, c| sum * t + c);
            let residual = t.signum() - fitted;
            total += residual * residual;
        }
        total / 2.0
    };
    let (_, gradient, _, loops) = on_tape(&values, None, &[], |x| residuals(x, 9));
    assert_eq!(loops, 9);
    assert_gradient_matches(plain, &values, &gradient, 1e-6);
    check(
        &values,
        9,
        |x| residuals(x, 9),
        |x| residuals(x, 9),
        |x| residuals(x, 9),
    );
}

#[test]
fn scalars_advanced_otherwise_run_as_written() {
    let values: Vec<f64> = (0..13).map(|i| 0.4 + 0.02 * i as f64).collect();
    let f = |v: &[Var]| advanced_apart(&v[..12], v[12]);
    check(
        &values,
        0,
        f,
        |v| advanced_apart(&v[..12], v[12]),
        |v| advanced_apart_by_hand(&v[..12], v[12]),
    );
}

#[test]
fn a_scalar_advanced_is_left_where_a_caught_panic_leaves_it() {
    for (len, at) in [(10, 5), (100, 40)] {
        let values: Vec<f64> = (0..len).map(|i| 0.2 * i as f64 - 0.7).collect();
        let plain = |x: &[f64]| {
            let mut y = x.to_vec();
            let mut p = 1.0;
            for i in 0..at {
                y[i] = x[i] * p * (10 / (at - i)) as f64;
                p *= 0.5;
            }
            y.iter().fold(p, |total, y| total + y * y)
        };
        let f = |x: &[Var]| caught_advanced(x, at);
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let (value, gradient, _, loops) = on_tape(&values, None, &[], f);
        let (value_by_term, gradient_by_term, _, _) = on_tape_as(true, &values, None, &[], f);
        let value_of_f64 = caught_advanced(&values, at);
        std::panic::set_hook(previous);
        assert_eq!(loops, 1);
        assert_eq!(value.to_bits(), plain(&values).to_bits());
        assert_eq!(value.to_bits(), value_by_term.to_bits());
        assert_eq!(value.to_bits(), value_of_f64.to_bits());
        assert_eq!(bits(&gradient), bits(&gradient_by_term));
        assert_gradient_matches(plain, &values, &gradient, 1e-6);
    }
}

//! Sums accumulated in loops (`total += e` in a `for`, `while` or `loop` that never reads
//! `total`) are one tape record with a slot for each scalar leaf of each term; so is `Sum`.
//! Every function is checked against central differences and against its plain `f64` value,
//! and the records are counted.

mod common;

use ad::reverse_diff;
use common::{central_gradient, check, records, STEP};

/// Terms added and subtracted, a term the macro cannot analyse (a call), a constant term.
#[reverse_diff]
fn mixed_terms(xs: &[f64], #[no_grad] c: f64) -> f64 {
    let mut total = xs[0];
    for i in 1..xs.len() {
        total += xs[i] * xs[i - 1];
        total -= (xs[i] * 0.5).sin();
        total += square(xs[i]);
        total += c;
    }
    total
}

#[reverse_diff]
fn square(x: f64) -> f64 {
    x * x
}

#[test]
fn a_loop_sum_is_one_record() {
    let xs = [0.3, -1.2, 0.8, 2.0, -0.4];
    let f = |x: &[f64]| mixed_terms(x, 0.25);
    check(f, |x| mixed_terms_grad(x, 0.25), &xs);
    // `square` records one node per call; the sum is one record.
    assert_eq!(records(&xs, |v| mixed_terms(v, 0.25)), 4 + 1);
}

/// `break` leaves the loop (the sum is finished after it); nested loops add to the same sum;
/// a `while` loop; a `loop` that breaks with a value.
#[reverse_diff]
fn control_flow(xs: &[f64], limit: usize) -> f64 {
    let mut total = 0.0;
    for i in 0..xs.len() {
        if i == limit {
            break;
        }
        for j in 0..=i {
            total += xs[i] * xs[j];
        }
    }
    let mut other = 1.0;
    let mut k = 0;
    while k < xs.len() {
        other -= xs[k].exp() * 0.1;
        k += 1;
    }
    let mut third = 0.0;
    let mut m = 0;
    let last = loop {
        third += xs[m] * 2.0;
        m += 1;
        if m == xs.len() {
            break xs[m - 1];
        }
    };
    total * other + third * last
}

#[test]
fn break_nested_loops_while_and_loop() {
    let xs = [0.3, -1.2, 0.8, 2.0];
    for limit in [0, 2, 10] {
        check(
            |x| control_flow(x, limit),
            |x| control_flow_grad(x, limit),
            &xs,
        );
    }
    // Three sums; then, since the macro cannot tell the type of `last` (a `loop`'s value),
    // `total * other + third * last` records one node per operation.
    assert_eq!(records(&xs, |v| control_flow(v, 10)), 3 + 3);
}

/// Loops the macro must leave alone: one that reads the sum, one whose sum is printed inside,
/// one that can leave an outer loop through a label.
#[reverse_diff]
fn not_accumulated(xs: &[f64]) -> f64 {
    let mut reads = 0.0;
    for x in xs.iter() {
        reads += x * reads + 1.0;
    }
    let mut printed = 0.0;
    for x in xs.iter() {
        printed += x * x;
        if printed > 1e300 {
            println!("{printed}");
        }
    }
    let mut labelled = 0.0;
    'outer: for i in 0..xs.len() {
        for j in 0..xs.len() {
            if i + j == 4 {
                break 'outer;
            }
            labelled += xs[i] * xs[j];
        }
    }
    reads + printed + labelled
}

#[test]
fn loops_that_read_print_or_leave_through_a_label() {
    let xs = [0.3, -1.2, 0.8, 2.0];
    check(not_accumulated, not_accumulated_grad, &xs);
    // One record per iteration in each loop (7 before the labelled break), one for the result.
    assert_eq!(records(&xs, not_accumulated), 4 + 4 + 7 + 1);
}

/// `Sum` over an iterator is one record too, and keeps `f64`'s value bit for bit. A sum of
/// mapped scalars (`.map(|x| x * x).sum()`) is one record with the leaves of every item, as a
/// loop's `total += x * x` is; a closure that can `return` keeps a record per item.
#[reverse_diff]
fn iterator_sum(xs: &[f64]) -> f64 {
    xs.iter().map(|x| x * x).sum::<f64>() + xs.iter().sum::<f64>()
}

/// The plain `f64` form of [`iterator_sum`], which the macro never sees.
fn iterator_sum_plain(xs: &[f64]) -> f64 {
    xs.iter().map(|x| x * x).sum::<f64>() + xs.iter().sum::<f64>()
}

#[reverse_diff]
fn mapped_sums(xs: &[f64], #[no_grad] ws: &[f64]) -> f64 {
    let weighted: f64 = xs.iter().zip(ws).map(|(x, w)| w * x.sin()).sum();
    let pairs = xs
        .chunks_exact(2)
        .map(|pair| pair[0] * pair[1])
        .sum::<f64>();
    #[allow(clippy::needless_return)]
    let returned = xs
        .iter()
        .map(|&x| {
            if x > 1.0 {
                return x;
            }
            x * 3.0
        })
        .sum::<f64>();
    weighted * pairs + returned
}

#[test]
fn iterator_sums() {
    let xs = [0.3, -1.2, 0.8, 2.0];
    check(iterator_sum, iterator_sum_grad, &xs);
    // Two sums (no record per square), their sum.
    assert_eq!(records(&xs, iterator_sum), 2 + 1);
    for xs in [&[-0.0][..], &[-0.0, -0.0], &[], &[1e300, -1e300, 1.0]] {
        let plain = iterator_sum_plain(xs).to_bits();
        assert_eq!(iterator_sum_grad(xs).0.to_bits(), plain);
        assert_eq!(iterator_sum(xs).to_bits(), plain);
    }
    let ws = [0.5, -2.0, 1.5, 0.25];
    check(|x| mapped_sums(x, &ws), |x| mapped_sums_grad(x, &ws), &xs);
    // `weighted` and `pairs` one record each (`chunks_exact` yields subslices of scalars); the
    // closure that returns records three items (the fourth is `x` itself) and their sum; the
    // final expression two records, since the macro cannot tell what `returned` holds.
    assert_eq!(records(&xs, |v| mapped_sums(v, &ws)), 1 + 1 + (3 + 1) + 2);
}

/// A sum named in a format string inside the loop is read there: not accumulated.
#[reverse_diff]
fn printed_by_name(xs: &[f64]) -> f64 {
    let mut total = 0.0;
    let mut lines = Vec::new();
    for x in xs.iter() {
        total += x * x;
        lines.push(format!("{total}"));
    }
    assert_eq!(lines.len(), xs.len());
    let running = if lines[0] == "9" { 1.0 } else { 0.0 };
    total + running
}

#[test]
fn a_sum_named_in_a_format_string() {
    let xs = [3.0, 1.0];
    // The first line prints the running total, 9.
    check(printed_by_name, printed_by_name_grad, &xs);
    assert_eq!(printed_by_name(&xs), 10.0 + 1.0);
}

/// A log-sum-exp that subtracts its largest term's value (`Real::value`, a constant): the sum
/// of exponentials is one record with a slot per term.
#[reverse_diff]
fn log_sum_exp(v: &[f64]) -> f64 {
    let mut largest = v[0].value();
    for x in v.iter() {
        largest = largest.max(x.value());
    }
    let mut total = 0.0;
    for x in v.iter() {
        total += (*x - largest).exp();
    }
    total.ln() + largest
}

#[test]
fn a_sum_with_a_constant_taken_from_a_value() {
    let v = [0.3, -1.2, 2.8, 2.0];
    check(log_sum_exp, log_sum_exp_grad, &v);
    // The sum, then `total.ln() + largest`.
    assert_eq!(records(&v, log_sum_exp), 1 + 1);
}

/// Two sums that grow in the same loop, a sum nested in another, an ordinary record between
/// them, and a result of two scalars, whose Jacobian sweeps the same tape once per row. A
/// finished sum keeps its operands in its own buffer, which the sweep finds by its node.
#[reverse_diff]
fn interleaved_sums(xs: &[f64]) -> [f64; 2] {
    let mut a = 0.0;
    let mut b = 0.0;
    for &x in xs.iter() {
        a += x * 2.0;
        b += x * x;
    }
    let middle = (a * b).sin();
    let mut total = 0.0;
    for i in 0..xs.len() {
        let mut row = 0.0;
        for j in 0..xs.len() {
            row += xs[i] * xs[j] * j as f64;
        }
        total += row * middle;
    }
    [middle + total, a - b]
}

#[test]
fn interleaved_and_nested_sums_in_every_row_of_a_jacobian() {
    // 4 inputs: every sum is short and copied into the tape. 130: `a` and `b` (130 slots) are
    // copied, the row sums and the total (260 slots each) keep their own buffers.
    for n in [4, 130] {
        let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin() * 0.5).collect();
        let (value, rows) = interleaved_sums_jacobian(&xs);
        assert_eq!(value, interleaved_sums(&xs));
        for (k, row) in rows.iter().enumerate() {
            let expected = central_gradient(|x| interleaved_sums(x)[k], &xs, STEP);
            for (got, want) in row.iter().zip(&expected) {
                assert!(
                    (got - want).abs() <= 1e-6 * want.abs().max(1.0),
                    "n = {n}, row {k}: {got} vs {want}"
                );
            }
        }
        // a and b one record each, then middle, then one per row sum and one for the total,
        // then the two results.
        assert_eq!(
            records(&xs, |vars| {
                let [first, second] = interleaved_sums(vars);
                first + second
            }),
            2 + 1 + n + 1 + 2 + 1
        );
    }
}

/// `for x in xs` over a borrowed slice (a parameter, or a subslice bound by `let`) binds a
/// reference to a scalar, and `for &c in ws` over borrowed constants binds a constant: the
/// terms fuse into the sum, so each loop is one record with no record per term (llsq's
/// `residual -= coefficient * power`).
#[reverse_diff]
fn over_borrowed_slices(xs: &[f64], #[no_grad] ws: &[f64]) -> f64 {
    let mut total = 0.0;
    let mut power: f64 = 1.0;
    for coefficient in xs {
        total -= coefficient * power;
        power *= 0.5;
    }
    let tail = &xs[1..];
    let mut squares = 0.0;
    for x in tail {
        squares += x * x;
    }
    let mut weighted = 0.0;
    for &w in ws {
        weighted += w * xs[0].sin();
    }
    total + squares * weighted
}

#[test]
fn loops_over_borrowed_slices_fuse_their_terms() {
    let xs = [0.3, -1.2, 0.8, 2.0];
    let ws = [0.5, -0.25, 2.0];
    check(
        |x| over_borrowed_slices(x, &ws),
        |x| over_borrowed_slices_grad(x, &ws),
        &xs,
    );
    // Three sums, and the final expression fused into one record.
    assert_eq!(records(&xs, |v| over_borrowed_slices(v, &ws)), 3 + 1);
}

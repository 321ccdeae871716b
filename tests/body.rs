//! Point 3 of the foundation issue: the Rust a differentiated body may contain, each construct
//! differentiated correctly.
//!
//! Every function under test is checked two ways: `f(..)` (the `f64` instance) returns what the
//! same body computes on plain `f64`, and the gradient of `f_grad` matches an analytic
//! derivative or a central difference of `f` itself (the `f64` instance never touches the tape,
//! so it is an independent reference).

mod common;

use ad::reverse_diff;
use approx::assert_relative_eq;
use common::{assert_gradient_matches, check_scalar, FD_TOLERANCE};
use std::cell::RefCell;

// ---------------------------------------------------------------------------------------------
// let, shadowing, blocks, tuples, destructuring
// ---------------------------------------------------------------------------------------------

#[reverse_diff]
fn bindings(x: f64, y: f64) -> f64 {
    let a = x * y;
    let a = a + 1.0; // shadowing
    let b = {
        let t = a * a;
        t - x
    };
    let pair = (a, b);
    let (p, q) = pair;
    let ((r, _), s) = ((p * q, 0.0), pair.1);
    let t: (f64, f64) = (r, s);
    let [u, v] = [t.0, t.1 * 2.0];
    u + v
}

#[test]
fn let_shadowing_blocks_and_tuples() {
    let (x, y) = (0.7, -1.3);
    let (value, (dx, dy)) = bindings_grad(x, y);
    // Analytic: a = xy + 1, b = a² - x, f = a·b + 2b = (a + 2)(a² - x).
    let a = x * y + 1.0;
    assert_relative_eq!(value, (a + 2.0) * (a * a - x), max_relative = 1e-14);
    // df/da = (a² - x) + (a + 2)·2a, df/dx = df/da·y - (a + 2), df/dy = df/da·x.
    let df_da = (a * a - x) + (a + 2.0) * 2.0 * a;
    assert_relative_eq!(dx, df_da * y - (a + 2.0), max_relative = 1e-13);
    assert_relative_eq!(dy, df_da * x, max_relative = 1e-13);
    assert_eq!(value, bindings(x, y));
}

// ---------------------------------------------------------------------------------------------
// Reassignment and compound assignment
// ---------------------------------------------------------------------------------------------

#[reverse_diff]
#[allow(clippy::useless_vec)] // a local `Vec` is the construct under test
fn assignments(x: f64, y: f64, #[no_grad] weights: &[f64]) -> f64 {
    let mut s = x;
    s += y;
    s -= 0.5 * x;
    s *= y;
    s /= 2.0;
    s = s * s + x; // reassignment
    let mut v = vec![0.0; 3];
    let w = [1.0, 2.0, 3.0];
    for i in 0..3 {
        v[i] += x * w[i]; // local array of reals
        v[i] += y * weights[i]; // constant data
    }
    v[1] -= y;
    v[2] *= y;
    v[0] /= y;
    v[1] = v[1] + v[0];
    let mut arr = [0.0; 3];
    arr[0] += s;
    arr[1] = x;
    arr[2] -= y * y;
    arr[1] *= 3.0;
    arr[2] /= x;
    v.iter().sum::<f64>() + arr[0] + arr[1] + arr[2]
}

#[test]
fn compound_assignment_on_scalars_and_elements() {
    let weights = [0.5, -1.0, 2.0];
    let f = |p: &[f64]| assignments(p[0], p[1], &weights);
    for point in [[0.7, 1.9], [-1.2, 0.4]] {
        let (value, (dx, dy)) = assignments_grad(point[0], point[1], &weights);
        assert_eq!(value.to_bits(), f(&point).to_bits());
        assert_gradient_matches(f, &point, &[dx, dy], FD_TOLERANCE);
    }
}

// ---------------------------------------------------------------------------------------------
// Branches
// ---------------------------------------------------------------------------------------------

#[reverse_diff]
fn branches(x: f64, n: usize) -> f64 {
    let root = if x > 0.0 { Some(x.sqrt()) } else { None };
    let base = if x < -1.0 {
        -x
    } else if x < 1.0 {
        x * x
    } else {
        x.ln() + 1.0
    };
    let extra = if let Some(r) = root { r } else { 0.0 };
    let m = match n {
        0 => base,
        1 | 2 => base * 2.0,
        k if x > 2.5 => base * k as f64,
        _ => base - x,
    };
    m + extra
}

#[test]
fn if_else_if_let_and_match_with_guards() {
    // Analytic derivative of each branch taken, at a point inside it.
    let cases: [(f64, usize, f64); 4] = [
        (-2.0, 0, -1.0),                                 // f = -x
        (0.5, 1, 2.0 * 2.0 * 0.5 + 0.5 / 0.5f64.sqrt()), // f = 2x² + √x
        (3.0, 5, 5.0 / 3.0 + 0.5 / 3.0f64.sqrt()),       // f = 5(ln x + 1) + √x
        (1.5, 5, 1.0 / 1.5 - 1.0 + 0.5 / 1.5f64.sqrt()), // f = ln x + 1 - x + √x
    ];
    for (x, n, expected) in cases {
        let (value, dx) = branches_grad(x, n);
        assert_eq!(value.to_bits(), branches(x, n).to_bits());
        assert_relative_eq!(dx, expected, max_relative = 1e-14);
    }
}

// ---------------------------------------------------------------------------------------------
// Loops
// ---------------------------------------------------------------------------------------------

#[reverse_diff]
#[allow(clippy::needless_range_loop, clippy::assign_op_pattern)] // the constructs under test
fn loops(xs: &[f64], x: f64) -> f64 {
    let mut total = 0.0;
    for i in 0..xs.len() {
        total += xs[i] * x;
    }
    for v in xs.iter() {
        total += v * v;
    }
    for (i, v) in xs.iter().enumerate() {
        if i % 2 == 1 {
            continue;
        }
        total += *v * i as f64;
    }
    for (a, b) in xs.iter().zip(xs.iter().skip(1)) {
        total += a * b;
    }
    let mut k = 0;
    while k < xs.len() {
        total -= xs[k] * 0.1;
        k += 1;
    }
    let mut y = x;
    let found = loop {
        y = y * 0.5;
        if y < 0.1 {
            break y * 3.0;
        }
    };
    'outer: for i in 0..xs.len() {
        for j in 0..xs.len() {
            if i + j > 3 {
                break 'outer;
            }
            total += xs[i] * xs[j] * x;
        }
    }
    total + found
}

#[test]
fn for_while_loop_break_value_continue_and_labels() {
    let xs = [0.3, -1.1, 2.0, 0.7];
    let x = 1.7;
    let (value, (dxs, dx)) = loops_grad(&xs, x);
    let mut point = xs.to_vec();
    point.push(x);
    let f = |p: &[f64]| loops(&p[..4], p[4]);
    assert_eq!(value.to_bits(), f(&point).to_bits());
    let mut gradient = dxs.clone();
    gradient.push(dx);
    assert_gradient_matches(f, &point, &gradient, FD_TOLERANCE);
}

/// The first element above a threshold times the threshold, with an early `return`.
#[reverse_diff]
fn first_above(xs: &[f64], threshold: f64) -> f64 {
    for x in xs {
        if *x > threshold {
            return x * threshold;
        }
    }
    threshold * threshold
}

#[test]
fn early_return() {
    // Analytic: the first xᵢ above t is x2 = 3, so f = x2·t: d/dx2 = t, d/dt = x2.
    let (value, (dxs, dt)) = first_above_grad(&[1.0, 2.0, 3.0, 4.0], 2.5);
    assert_eq!(value, 7.5);
    assert_eq!(dxs, vec![0.0, 0.0, 2.5, 0.0]);
    assert_eq!(dt, 3.0);
    // No element above: f = t², d/dt = 2t.
    let (value, (dxs, dt)) = first_above_grad(&[1.0], 2.5);
    assert_eq!((value, dxs, dt), (6.25, vec![0.0], 5.0));
}

// ---------------------------------------------------------------------------------------------
// Literals, casts, constants
// ---------------------------------------------------------------------------------------------

/// A module-level constant used from a differentiated body.
const SCALE: f64 = 3.0;

#[reverse_diff]
fn literals(x: f64, n: usize) -> f64 {
    const OFFSET: f64 = 0.25;
    let zeros = vec![0.0; n];
    let mut ones = vec![1.0; n];
    ones[0] = x;
    let arr = [1.0, 2.0];
    let rep = [0.5; 3];
    let suffixed = 1.0f64;
    let tiny = 1e-8;
    let big = 2.5e3;
    let negative = -1.5;
    let i: i32 = 7;
    let from_int = i as f64 + n as f64 + (n * 2) as f64 + 3 as f64;
    let same = x as f64;
    let pi = std::f64::consts::PI;
    let e = core::f64::consts::E;
    let capped = if x < f64::INFINITY { x } else { 0.0 };
    let step = x * (1.0 + f64::EPSILON);
    zeros.iter().sum::<f64>()
        + ones.iter().product::<f64>() * arr[1]
        + rep[2] * x * suffixed
        + tiny * x
        + big * x * negative
        + from_int * x
        + same * pi
        + e * capped
        + step
        + (n as f64).sqrt() * x
        + SCALE * x
        + OFFSET
}

#[test]
fn float_literals_casts_and_constants() {
    let n = 3;
    check_scalar(|x| literals(x, n), |x| literals_grad(x, n), 0.8);
    // Analytic: every term is linear in x.
    let from_int = 7.0 + 3.0 + 6.0 + 3.0;
    let expected = 2.0 + 0.5 + 1e-8 - 2.5e3 * 1.5
        + from_int
        + std::f64::consts::PI
        + std::f64::consts::E
        + (1.0 + f64::EPSILON)
        + 3.0f64.sqrt()
        + 3.0;
    assert_relative_eq!(literals_grad(0.8, n).1, expected, max_relative = 1e-14);
}

// ---------------------------------------------------------------------------------------------
// Comparisons
// ---------------------------------------------------------------------------------------------

#[reverse_diff]
fn comparisons(x: f64, y: f64, #[no_grad] data: &[f64]) -> f64 {
    let mut count = 0.0;
    let checks = [
        x < y,
        x <= 2.0,
        2.0 < x,
        data[0] < x,
        x == y,
        x != data[1],
        x >= data[1],
        y > 0.0,
        x.partial_cmp(&y) == Some(std::cmp::Ordering::Less),
    ];
    for check in checks {
        if check {
            count += 1.0;
        }
    }
    count * x + y
}

/// The same body, not annotated.
fn comparisons_plain(x: f64, y: f64, data: &[f64]) -> f64 {
    let mut count = 0.0;
    let checks = [
        x < y,
        x <= 2.0,
        2.0 < x,
        data[0] < x,
        x == y,
        x != data[1],
        x >= data[1],
        y > 0.0,
        x.partial_cmp(&y) == Some(std::cmp::Ordering::Less),
    ];
    for check in checks {
        if check {
            count += 1.0;
        }
    }
    count * x + y
}

#[test]
fn comparisons_between_reals_literals_and_data() {
    let data = [1.0, 3.0];
    for (x, y) in [(1.5, 2.0), (3.0, 3.0), (2.5, -1.0), (0.5, 0.5)] {
        let (value, (dx, dy)) = comparisons_grad(x, y, &data);
        let plain = comparisons_plain(x, y, &data);
        assert_eq!(value.to_bits(), plain.to_bits(), "at ({x}, {y})");
        assert_eq!(comparisons(x, y, &data).to_bits(), plain.to_bits());
        // Analytic: f = count·x + y with count constant, so (count, 1); count = (f - y) / x.
        assert_eq!(dx, (plain - y) / x);
        assert_eq!(dy, 1.0);
    }
}

// ---------------------------------------------------------------------------------------------
// Iterators and local vectors
// ---------------------------------------------------------------------------------------------

#[reverse_diff]
#[allow(clippy::iter_cloned_collect)] // `copied().collect()` is the construct under test
fn iterators(xs: &[f64]) -> f64 {
    let sum = xs.iter().sum::<f64>();
    let squares = xs.iter().map(|v| v * v).sum::<f64>();
    let product: f64 = xs.iter().product();
    let copied_product = xs.iter().copied().product::<f64>();
    let folded = xs.iter().fold(0.0, |a, b| a + b * 2.0);
    let copied: Vec<f64> = xs.iter().copied().collect();
    let mut pushed = Vec::new();
    for v in xs {
        pushed.push(v * 3.0);
    }
    let sines: Vec<f64> = xs.iter().map(|v| v.sin()).collect();
    let middle = &pushed[1..3];
    let len = middle.len() as f64;
    sum + squares
        + product
        + copied_product
        + folded
        + copied[0] * middle.iter().sum::<f64>() / len
        + sines[sines.len() - 1]
}

#[test]
fn sum_product_fold_copied_push_collect_slice_len() {
    let xs = [0.4, -1.3, 2.2, 0.9];
    let (value, gradient) = iterators_grad(&xs);
    assert_eq!(value.to_bits(), iterators(&xs).to_bits());
    assert_gradient_matches(iterators, &xs, &gradient, FD_TOLERANCE);
}

/// A closure over reals, typed and untyped, called directly and from an iterator.
#[reverse_diff]
fn closures(xs: &[f64], scale: f64) -> f64 {
    let square = |v: f64| v * v;
    let scaled = |v| v * scale;
    square(scale) + xs.iter().map(|&v| scaled(square(v))).sum::<f64>()
}

#[test]
fn closures_over_reals() {
    let xs = [0.5, 2.0];
    let (value, (dxs, dscale)) = closures_grad(&xs, 1.5);
    // Analytic: f = s² + s Σ xᵢ², so d/dxᵢ = 2 s xᵢ and d/ds = 2s + Σ xᵢ².
    assert_eq!(value, 2.25 + 1.5 * 4.25);
    assert_eq!(dxs, vec![1.5, 6.0]);
    assert_eq!(dscale, 3.0 + 4.25);
}

// ---------------------------------------------------------------------------------------------
// Mixing with constant data
// ---------------------------------------------------------------------------------------------

#[reverse_diff]
fn with_data(x: f64, #[no_grad] data: &[f64], #[no_grad] c: f64, n: usize) -> f64 {
    const OFFSET: f64 = 0.25;
    let mean = data.iter().sum::<f64>() / n as f64;
    let half_n = n as f64 * 0.5;
    let mut total = x * SCALE + OFFSET;
    for d in data {
        total += d * x;
        total = *d + total;
        total -= d;
    }
    total += data[1];
    total *= data[0];
    total /= c;
    total = c - total;
    total + mean * x + half_n + data[0] / x + SCALE - x + c * x + x.powf(c) + x.max(c)
}

#[test]
fn reals_mix_with_no_grad_data_consts_and_integers() {
    let data = [2.0, -0.5, 1.5];
    let f = |x| with_data(x, &data, 1.25, 3);
    check_scalar(f, |x| with_data_grad(x, &data, 1.25, 3), 0.9);
    check_scalar(f, |x| with_data_grad(x, &data, 1.25, 3), 1.7);
}

/// Locals that start from constant data and then take reals, and the path form of a method on
/// constant data.
#[reverse_diff]
fn locals_from_data(x: f64, #[no_grad] data: &[f64], #[no_grad] c: f64, n: u32) -> f64 {
    use std::f64::consts::PI;
    let mut first: f64 = data[0];
    first += x;
    let mut product: f64 = data[0] * data[1];
    product *= x;
    let mut angle: f64 = PI;
    angle -= x;
    let negated: f64 = -data[1].abs();
    let sum: f64 = data.iter().sum();
    let mut count = 0f64;
    count += x * 1_f64;
    first
        + product
        + angle.sin()
        + negated * x
        + sum * x
        + count
        + f64::sin(data[0]) * x
        + f64::max(c, x)
        + f64::powi(c, 2) * x
        + f64::sqrt(data.iter().sum()) * x
        + f64::from(n) * x
        + data.iter().copied().fold(f64::NEG_INFINITY, f64::max) * x
}

#[test]
fn locals_initialised_from_constant_data_take_reals() {
    let data = [2.0, -0.5, 1.5];
    let f = |x| locals_from_data(x, &data, 1.25, 4);
    // x below and above c (the `max` switches operand).
    check_scalar(f, |x| locals_from_data_grad(x, &data, 1.25, 4), 0.9);
    check_scalar(f, |x| locals_from_data_grad(x, &data, 1.25, 4), 1.7);
}

// ---------------------------------------------------------------------------------------------
// println!, format!, assert!, debug_assert!
// ---------------------------------------------------------------------------------------------

#[reverse_diff]
fn with_macros(x: f64, #[no_grad] log: &RefCell<Vec<String>>) -> f64 {
    let y = x * 2.0;
    assert!(y > 0.0, "y must be positive, got {}", y);
    debug_assert!(x < 10.0, "x = {x}");
    assert_eq!(y, x + x);
    debug_assert_ne!(y, 0.0);
    println!("x = {x}, y = {:.3}", y * 1.0);
    log.borrow_mut().push(format!(
        "{} {:.3} {:?} {:e} {y:>8.2} {:+}",
        x,
        y,
        x * 0.5,
        y,
        -x
    ));
    y * y
}

#[test]
fn formatting_and_assertion_macros_see_the_value() {
    let plain_log = RefCell::new(Vec::new());
    let grad_log = RefCell::new(Vec::new());
    let value = with_macros(1.25, &plain_log);
    let (grad_value, dx) = with_macros_grad(1.25, &grad_log);
    assert_eq!(value, grad_value);
    // Analytic: f = 4x², f' = 8x.
    assert_eq!(dx, 10.0);
    assert_eq!(plain_log.into_inner(), grad_log.borrow().clone());
    assert_eq!(
        grad_log.borrow()[0],
        "1.25 2.500 0.625 2.5e0     2.50 -1.25"
    );
}

#[test]
#[should_panic(expected = "y must be positive, got -2")]
fn assert_in_a_differentiated_body_shows_the_value() {
    let log = RefCell::new(Vec::new());
    let _ = with_macros_grad(-1.0, &log);
}

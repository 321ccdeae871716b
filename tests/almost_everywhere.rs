//! The "almost everywhere" caveat (the lecture slides on AD in PCF, "Unsoundness"): a program with a
//! branch or a kink can compute a smooth function and still get a derivative that is not that
//! function's derivative at the branch point. `relu(x) - relu(-x)` is `x` everywhere, but its
//! derivative at 0 is not 1: the tape differentiates the branch that ran (or the operand `max`
//! picked), not the function the branches add up to. Away from the single point 0, the derivative
//! is right (checked against central differences). README, "Correctness", explains it.

mod common;

use ad::reverse_diff;
use approx::assert_relative_eq;
use common::{central_derivative, STEP};

/// `relu` with a branch: at 0 the `else` branch runs, a constant.
#[reverse_diff]
fn relu_branch(x: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

/// `relu` with `max`: at 0 the tie goes to the receiver `x` (the documented convention).
#[reverse_diff]
fn relu_max(x: f64) -> f64 {
    x.max(0.0)
}

/// `relu` with `max` the other way round: at 0 the tie goes to the receiver, the constant 0.
#[reverse_diff]
fn relu_max_constant_first(x: f64) -> f64 {
    f64::max(0.0, x)
}

/// `x`, written as `relu(x) - relu(-x)` with a branch.
#[reverse_diff]
fn identity_by_branches(x: f64) -> f64 {
    relu_branch(x) - relu_branch(-x)
}

/// `x`, written as `relu(x) - relu(-x)` with `x.max(0.0)`.
#[reverse_diff]
fn identity_by_max(x: f64) -> f64 {
    relu_max(x) - relu_max(-x)
}

/// `x`, written as `relu(x) - relu(-x)` with `f64::max(0.0, x)`.
#[reverse_diff]
fn identity_by_max_constant_first(x: f64) -> f64 {
    relu_max_constant_first(x) - relu_max_constant_first(-x)
}

type ScalarGrad = fn(f64) -> (f64, f64);

/// A way of writing the identity: its name, the function, and its `_grad`.
type Form = (&'static str, fn(f64) -> f64, ScalarGrad);

const FORMS: [Form; 3] = [
    ("branch", identity_by_branches, identity_by_branches_grad),
    ("x.max(0.0)", identity_by_max, identity_by_max_grad),
    (
        "f64::max(0.0, x)",
        identity_by_max_constant_first,
        identity_by_max_constant_first_grad,
    ),
];

#[test]
fn every_form_computes_the_identity() {
    for (form, f, grad) in FORMS {
        for x in [-2.5, -1e-300, -0.0, 0.0, 1e-300, 0.75, 3.0] {
            assert_eq!(f(x), x, "{form} at {x}");
            assert_eq!(grad(x).0, x, "{form} at {x}: value through the tape");
        }
    }
}

#[test]
fn derivative_is_one_away_from_zero() {
    for (form, f, grad) in FORMS {
        for x in [-2.5, -0.1, 1e-3, 0.75, 3.0] {
            let derivative = grad(x).1;
            // The function is x near these points: central difference 1 (step 1e-5 < |x|).
            let central = central_derivative(f, x, STEP.min(x.abs() / 2.0));
            assert_relative_eq!(central, 1.0, max_relative = 1e-9);
            assert_eq!(derivative, 1.0, "{form} at {x}");
        }
    }
}

#[test]
fn derivative_at_zero_is_not_one() {
    // The central difference of the identity at 0 is 1, and the function is x...
    assert_eq!(central_derivative(identity_by_branches, 0.0, STEP), 1.0);
    // ...but each form differentiates the pieces that ran at 0:
    // - branch: both `relu_branch(0)` and `relu_branch(-0)` take `else { 0.0 }`, a constant:
    //   0 - 0 = 0;
    // - `x.max(0.0)`: a tie goes to the receiver, so d/dx max(x, 0) = 1 and
    //   d/dx max(-x, 0) = -1: 1 - (-1) = 2;
    // - `f64::max(0.0, x)`: the receiver is the constant: 0 - 0 = 0.
    let at_zero: Vec<(&str, f64)> = FORMS
        .iter()
        .map(|(form, _, grad)| (*form, grad(0.0).1))
        .collect();
    assert_eq!(
        at_zero,
        [
            ("branch", 0.0),
            ("x.max(0.0)", 2.0),
            ("f64::max(0.0, x)", 0.0)
        ]
    );
    // relu itself at 0: a subgradient in every form (anything in [0, 1] is one).
    assert_eq!(relu_branch_grad(0.0).1, 0.0);
    assert_eq!(relu_max_grad(0.0).1, 1.0);
    assert_eq!(relu_max_constant_first_grad(0.0).1, 0.0);
}

/// `(x - x).cbrt()` is identically 0, but `cbrt`'s partial at 0 is +∞. One expression: one
/// record, whose partials both modes take.
#[reverse_diff]
#[allow(clippy::eq_op)] // the cancellation is the point
fn cbrt_of_zero_difference(x: f64) -> f64 {
    (x - x).cbrt()
}

/// `a - b`, a helper: its operands are values the caller passes, its result a value the
/// caller's records read.
#[reverse_diff]
fn difference(a: f64, b: f64) -> f64 {
    a - b
}

/// The same function as [`cbrt_of_zero_difference`] in two records: the helper's difference,
/// then `cbrt` of it.
#[reverse_diff]
fn cbrt_of_zero_difference_apart(x: f64) -> f64 {
    let zero: f64 = difference(x, x);
    zero.cbrt()
}

/// `√x − √x` is identically 0, but `sqrt`'s partial at 0 is +∞: the root, then the helper's
/// difference of it with itself, two records.
#[reverse_diff]
fn zero_difference_of_roots(x: f64) -> f64 {
    let r = x.sqrt();
    difference(r, r)
}

/// Where a partial is infinite the two modes part, in either direction (README, "Correctness"),
/// across records; inside one record both take its partials. `(x − x).cbrt()` as one
/// expression: NaN in both modes (`∞·1 + ∞·(−1)`). The same in two records: the tape sums
/// `∞·1 + ∞·(−1)` into the adjoint of `x` (NaN), while forward mode (`_grad` of one scalar)
/// carries the exact tangent `1 − 1 = 0` of `x − x` past the infinite partial (0). `√x − √x`
/// at 0 (two records): forward mode forms `∞ − ∞` (NaN), while on the tape the adjoint of `√x`
/// is `1 − 1 = 0` and passes nothing back (0).
#[test]
fn an_infinite_partial_and_a_cancellation_part_the_two_modes() {
    for x in [-2.0, 0.0, 0.5, 3.0] {
        let (value, forward) = cbrt_of_zero_difference_grad(x);
        let (tape_value, tape) = cbrt_of_zero_difference_vjp(x, &1.0);
        assert_eq!((value, tape_value), (0.0, 0.0));
        assert!(forward.is_nan(), "forward mode gives {forward} at {x}");
        assert!(tape.is_nan(), "the tape gives {tape} at {x}");
        let (value, forward) = cbrt_of_zero_difference_apart_grad(x);
        let (tape_value, tape) = cbrt_of_zero_difference_apart_vjp(x, &1.0);
        assert_eq!((value, tape_value), (0.0, 0.0));
        assert_eq!(forward, 0.0);
        assert!(tape.is_nan(), "the tape gives {tape} at {x}");
    }
    let (_, forward) = zero_difference_of_roots_grad(0.0);
    let (_, tape) = zero_difference_of_roots_vjp(0.0, &1.0);
    assert!(forward.is_nan(), "forward mode gives {forward}");
    assert_eq!(tape, 0.0);
    // Away from 0 both give the derivative of the constant function.
    assert_eq!(zero_difference_of_roots_grad(2.0).1, 0.0);
    assert_eq!(zero_difference_of_roots_vjp(2.0, &1.0).1, 0.0);
}

/// `1e300 · (1e-200 · (1e-200 · x))`, one factor per record (each `y *= factor` is one
/// operation): derivative 1e-100, whose partials multiply to 1e-400 from the input side.
#[reverse_diff]
fn tiny_then_huge(x: f64) -> f64 {
    let mut y = x;
    for factor in [1e-200, 1e-200, 1e300] {
        y *= factor;
    }
    y
}

/// `1e-200 · (1e-200 · (1e300 · x))`, one factor per record: the same derivative, whose partials
/// multiply to 1e-400 from the output side.
#[reverse_diff]
fn huge_then_tiny(x: f64) -> f64 {
    let mut y = x;
    for factor in [1e300, 1e-200, 1e-200] {
        y *= factor;
    }
    y
}

/// [`tiny_then_huge`] as one expression: one record, whose partials are multiplied from the
/// output side in both modes.
#[reverse_diff]
fn tiny_then_huge_at_once(x: f64) -> f64 {
    1e300 * (1e-200 * (1e-200 * x))
}

/// A product of partials underflows, across records, in forward mode from the input side and
/// on the tape from the output side: 0, a plausible wrong number (README, "Correctness").
/// Inside one record both modes multiply from the output side.
#[test]
fn products_of_partials_underflow_in_the_order_of_each_mode() {
    let x = 1e150;
    assert_eq!(tiny_then_huge_grad(x).1, 0.0);
    assert_relative_eq!(tiny_then_huge_vjp(x, &1.0).1, 1e-100, max_relative = 1e-14);
    assert_relative_eq!(huge_then_tiny_grad(x).1, 1e-100, max_relative = 1e-14);
    assert_eq!(huge_then_tiny_vjp(x, &1.0).1, 0.0);
    assert_relative_eq!(
        tiny_then_huge_at_once_grad(x).1,
        1e-100,
        max_relative = 1e-14
    );
    assert_relative_eq!(
        tiny_then_huge_at_once_vjp(x, &1.0).1,
        1e-100,
        max_relative = 1e-14
    );
}

//! Constant data passed where a differentiable `f64` is expected: to a closure whose parameter
//! is typed `f64` (quadrature over constant nodes), and to a method of the same annotated
//! `impl` block (`self.predict(p, t)` with `t` from `#[no_grad]` data or a named constant);
//! a method of two reals called on constant data (`c.max(1e-9)`, `c.max(x)`, chained or with
//! `f64::EPSILON`, or computed from it as an argument, `x.max(d.abs())`); constant data as
//! one branch of an `if` or `match`, or one element of an array, whose other branches or
//! elements are differentiable; constant data assigned to a scalar (`best = data[i]`) or
//! returned (`return lo;`, a `let` of it as the body's value, branches all of it, an element
//! of a returned tuple or array: `(x * x, c)`) or bound
//! with an ascription (`let a: [f64; 2] = [data[0], x];`); a copy of constant data ascribed
//! as a sequence of `f64` (`let mut y: Vec<f64> = y0.to_vec();`, `std::array::from_fn`, a map
//! collected) whose elements then take reals; and `f64`'s methods as values (`map(f64::abs)`)
//! over either.
//! Gradients are checked against central differences (tolerance 1e-6), values bit for bit.

mod common;

use ad::reverse_diff;
use approx::assert_relative_eq;
use common::{assert_gradient_matches, central_derivative, check, records, STEP};

/// Three-point Gauss–Legendre nodes and weights on [-1, 1].
const NODES: [f64; 3] = [-0.774_596_669_241_483_4, 0.0, 0.774_596_669_241_483_4];
const WEIGHTS: [f64; 3] = [5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0];

/// `∫₋₁¹ w sin(w u) + u² du` by Gauss–Legendre: the closure takes the constant nodes.
#[reverse_diff]
fn quadrature(w: f64) -> f64 {
    let g = |u: f64| (w * u).sin() + u * u;
    NODES
        .iter()
        .zip(WEIGHTS.iter())
        .map(|(&u, &c)| c * w * g(u))
        .sum()
}

/// The form: `NODES.iter().map(|&u| w * g(u))`, with a `mut` closure parameter.
#[reverse_diff]
fn weighted_nodes(w: f64) -> f64 {
    let g = |mut u: f64| {
        u *= 2.0;
        (w * u).exp()
    };
    NODES.iter().map(|&u| w * g(u)).sum::<f64>()
}

/// The same closure shape called with the differentiable value still works.
#[reverse_diff]
fn closure_of_scalar(x: f64) -> f64 {
    let g = |u: f64| u * u + x;
    g(x.sin()) + g(2.0)
}

/// Closures typed `f64` whose parameter type comes from where they go: a boxed `dyn Fn(f64) ->
/// f64`, and the `impl Fn(f64) -> f64` parameter of another annotated function.
#[reverse_diff]
fn closures_given_a_type(x: f64) -> f64 {
    let boxed: Vec<Box<dyn Fn(f64) -> f64>> =
        vec![Box::new(|u: f64| u * x), Box::new(|u: f64| u.sin())];
    let total: f64 = boxed.iter().map(|f| f(x)).sum();
    total + apply(|u: f64| u * u, x)
}

#[reverse_diff]
fn apply(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    f(x) + f(2.0)
}

/// Exponential decay `y = a e^{-k t}` fitted to data held by the model.
struct Decay {
    ts: Vec<f64>,
    ys: Vec<f64>,
}

const LATE: f64 = 3.0;

#[reverse_diff]
impl Decay {
    /// The prediction at time `t` (differentiable in `p` and in `t`).
    #[reverse_diff]
    fn predict(&self, p: &[f64], t: f64) -> f64 {
        p[0] * (-p[1] * t).exp()
    }

    /// Squared error over the model's own data: `t` is constant data of `self`.
    #[reverse_diff]
    fn loss(&self, p: &[f64]) -> f64 {
        let mut total = 0.0;
        for (&t, &y) in self.ts.iter().zip(&self.ys) {
            let r = self.predict(p, t) - y;
            total += r * r;
        }
        total + self.predict(p, LATE)
    }

    /// Squared error over `#[no_grad]` data, through both call forms.
    #[reverse_diff]
    fn loss_on(&self, p: &[f64], #[no_grad] ts: &[f64], #[no_grad] ys: &[f64]) -> f64 {
        let mut total = 0.0;
        for i in 0..ts.len() {
            let r = self.predict(p, ts[i]) - ys[i];
            let s = Self::predict(self, p, ts[i]) - ys[i];
            total += r * s;
        }
        total
    }

    /// The prediction at a time `t` taken as constant data.
    #[reverse_diff]
    fn at(&self, p: &[f64], #[no_grad] t: f64) -> f64 {
        self.predict(p, t)
    }

    /// Squared error at times computed from constant data, passed to `at`'s `#[no_grad]` `t`
    /// through both call forms: they stay plain `f64`s.
    #[reverse_diff]
    fn loss_shifted(&self, p: &[f64], #[no_grad] ts: &[f64], #[no_grad] shift: f64) -> f64 {
        let mut total = 0.0;
        for (&t, &y) in ts.iter().zip(&self.ys) {
            let r = self.at(p, t * 0.5) - y;
            let s = Self::at(self, p, 0.5 * t + shift / 2.0) - y;
            total += r * s;
        }
        total
    }
}

/// Checks a scalar function's `_grad` at `x`: the value bit for bit, the derivative against
/// central differences.
#[track_caller]
fn check_scalar(f: impl Fn(f64) -> f64, grad: impl Fn(f64) -> (f64, f64), x: f64) {
    let (value, derivative) = grad(x);
    assert_eq!(value.to_bits(), f(x).to_bits());
    let expected = central_derivative(&f, x, STEP);
    let tolerance = 1e-6 * expected.abs().max(1.0);
    assert!(
        (derivative - expected).abs() <= tolerance,
        "{derivative} vs {expected}"
    );
}

#[test]
fn a_closure_over_constant_nodes_matches_central_differences() {
    for w in [0.3, 1.7, -2.2] {
        check_scalar(quadrature, quadrature_grad, w);
        check_scalar(weighted_nodes, weighted_nodes_grad, w);
    }
}

#[test]
fn a_closure_typed_f64_still_takes_the_scalar() {
    let x = 0.8;
    let (value, dx) = closure_of_scalar_grad(x);
    assert_eq!(value.to_bits(), closure_of_scalar(x).to_bits());
    // d/dx [sin²x + x + 4 + x] = 2 sin x cos x + 2
    let expected = 2.0 * x.sin() * x.cos() + 2.0;
    assert!((dx - expected).abs() <= 1e-12, "{dx} vs {expected}");
}

#[test]
fn closures_typed_f64_take_their_type_from_where_they_go() {
    for x in [0.4, -1.3] {
        check_scalar(closures_given_a_type, closures_given_a_type_grad, x);
    }
}

#[test]
fn a_sibling_method_takes_constant_data_for_its_scalar() {
    let model = Decay {
        ts: vec![0.0, 0.5, 1.0, 2.0],
        ys: vec![2.0, 1.3, 0.8, 0.3],
    };
    let p = [1.8, 0.9];
    check(|p| model.loss(p), |p| model.loss_grad(p), &p);
    let (ts, ys) = ([0.1, 0.7, 1.5], [1.6, 1.0, 0.5]);
    check(
        |p| model.loss_on(p, &ts, &ys),
        |p| model.loss_on_grad(p, &ts, &ys),
        &p,
    );
    check(
        |p| model.loss_shifted(p, &ts, 0.25),
        |p| model.loss_shifted_grad(p, &ts, 0.25),
        &p,
    );
    // `predict` keeps its own derivative in `t`.
    let (value, (dp, dt)) = model.predict_grad(&p, 0.4);
    assert_eq!(value.to_bits(), model.predict(&p, 0.4).to_bits());
    assert_gradient_matches(|p| model.predict(p, 0.4), &p, &dp, 1e-6);
    let expected = central_derivative(|t| model.predict(&p, t), 0.4, STEP);
    assert!((dt - expected).abs() <= 1e-6, "{dt} vs {expected}");
}

/// Methods of two reals on constant data: `f64`'s own when the arguments have no derivative
/// (`c.max(1e-9)`, `data[0].clamp(0.0, 1.0)`, `c.min(h)` with `h` fixed), the scalar's when one
/// is differentiable (`c.max(x)`, `c.powf(x)`).
#[reverse_diff]
fn methods_on_constant_data(x: f64, #[no_grad] c: f64, #[no_grad] data: &[f64], n: usize) -> f64 {
    let h = 1.0 / n as f64;
    let constant = c.max(1e-9) * data[0].clamp(0.0, 1.0) + c.min(h) + data[1].powf(2.0);
    let mixed = c.max(x) + data[0].min(x * 2.0) + c.powf(x) + c.atan2(x) + c.hypot(x);
    constant * x + mixed + c.mul_add(x, 1.0)
}

/// The same formula, written apart over `f64`.
fn methods_on_constant_data_by_hand(x: f64, c: f64, data: &[f64], n: usize) -> f64 {
    let constant =
        c.max(1e-9) * data[0].clamp(0.0, 1.0) + c.min(1.0 / n as f64) + data[1] * data[1];
    let mixed = c.max(x) + data[0].min(2.0 * x) + c.powf(x) + c.atan2(x) + c.hypot(x);
    constant * x + mixed + (c * x + 1.0)
}

/// Checks `grad` at each of `xs` ([`check_scalar`]), and `f` against the same formula written
/// apart over `f64`, `by_hand` (to 1e-12).
#[track_caller]
fn check_by_hand(
    f: impl Fn(f64) -> f64,
    grad: impl Fn(f64) -> (f64, f64),
    by_hand: impl Fn(f64) -> f64,
    xs: &[f64],
) {
    for &x in xs {
        check_scalar(&f, &grad, x);
        assert!(
            (f(x) - by_hand(x)).abs() < 1e-12,
            "at {x}: {} vs {}",
            f(x),
            by_hand(x)
        );
    }
}

#[test]
fn methods_of_two_reals_take_constant_data_either_way_round() {
    let (c, data, n) = (1.3, [0.4, 3.0], 4);
    // Away from the kinks of `c.max(x)` (x = 1.3) and `data[0].min(2x)` (x = 0.2).
    check_by_hand(
        |x| methods_on_constant_data(x, c, &data, n),
        |x| methods_on_constant_data_grad(x, c, &data, n),
        |x| methods_on_constant_data_by_hand(x, c, &data, n),
        &[0.1, 0.7, 2.5],
    );
}

/// Calls on constant data chained, bound by a `let`, and given `f64`'s constants.
#[reverse_diff]
fn chained_calls_on_constant_data(x: f64, #[no_grad] data: &[f64]) -> f64 {
    let d = data[0];
    let floor = d.max(0.1);
    let mut total = x * d.powf(2.0).max(0.1) + x * floor.min(2.0) + x * d.hypot(1.0).max(0.1);
    for &e in data {
        total += x / e.abs().max(f64::EPSILON) + x * e.powf(2.0).clamp(0.1, 3.0);
    }
    total + (x + f64::EPSILON).ln() * std::f64::consts::PI
}

/// The same formula, written apart over `f64`.
fn chained_calls_on_constant_data_by_hand(x: f64, data: &[f64]) -> f64 {
    let d = data[0];
    let mut total = x * (d * d).max(0.1) + x * d.clamp(0.1, 2.0) + x * d.hypot(1.0);
    for &e in data {
        total += x / e.abs() + x * (e * e).clamp(0.1, 3.0);
    }
    total + (x + f64::EPSILON).ln() * std::f64::consts::PI
}

#[test]
fn calls_on_constant_data_chain_and_take_f64_constants() {
    let data = [1.5, -2.0, 0.3];
    check_by_hand(
        |x| chained_calls_on_constant_data(x, &data),
        |x| chained_calls_on_constant_data_grad(x, &data),
        |x| chained_calls_on_constant_data_by_hand(x, &data),
        &[0.7, 1.8],
    );
}

/// Constant data as a branch or an element beside differentiable ones (`vec!` as written).
#[allow(clippy::useless_vec)]
#[reverse_diff]
fn constant_branches_and_elements(
    x: f64,
    #[no_grad] c: f64,
    #[no_grad] data: &[f64],
    n: usize,
) -> f64 {
    let first = if data.is_empty() { 0.0 } else { data[0] };
    let y = if c > x { c } else { x * x };
    let w = match n {
        0 => c,
        1 => x,
        _ => {
            if c > 0.0 {
                2.0 * x
            } else {
                data[1]
            }
        }
    };
    let mapped: f64 = data.iter().map(|&d| if d > 0.0 { d * x } else { d }).sum();
    let array = [x, data[0], x * data[1]];
    let list = vec![x, c, 2.0];
    first * x + y + w * x + mapped + array[0] * array[1] + array[2] + list[0] * list[1] * list[2]
}

/// The same formula, written apart over `f64`.
fn constant_branches_and_elements_by_hand(x: f64, c: f64, data: &[f64], n: usize) -> f64 {
    let y = if c > x { c } else { x * x };
    let w = match n {
        0 => c,
        1 => x,
        _ if c > 0.0 => 2.0 * x,
        _ => data[1],
    };
    let mapped: f64 = data.iter().map(|&d| if d > 0.0 { d * x } else { d }).sum();
    data[0] * x + y + w * x + mapped + x * data[0] + x * data[1] + 2.0 * x * c
}

#[test]
fn constant_data_shares_a_type_with_differentiable_branches_and_elements() {
    let data = [1.5, -2.0, 0.3];
    for (c, n) in [(1.3, 0), (0.3, 1), (0.3, 2), (-1.0, 2)] {
        // Away from the kink of `if c > x` (x = c).
        check_by_hand(
            |x| constant_branches_and_elements(x, c, &data, n),
            |x| constant_branches_and_elements_grad(x, c, &data, n),
            |x| constant_branches_and_elements_by_hand(x, c, &data, n),
            &[0.7, 1.8],
        );
    }
}

/// Constant data computed as an argument, and assigned to scalars (a local, an element).
#[allow(clippy::needless_range_loop)]
#[reverse_diff]
fn constant_data_assigned_and_computed(x: f64, #[no_grad] data: &[f64]) -> f64 {
    let mut v = vec![0.0; data.len()];
    for i in 0..data.len() {
        v[i] = data[i];
    }
    let mut best = 0.0;
    for &d in data {
        if d > best {
            best = d;
        }
    }
    v[0] += x;
    let d = data[0];
    v[0] * best * x + x.max(d.abs()) + x.powf(d.abs())
}

#[test]
fn constant_data_is_assigned_to_scalars_and_computed_as_arguments() {
    let data = [1.5, -2.0, 2.5];
    check_by_hand(
        |x| constant_data_assigned_and_computed(x, &data),
        |x| constant_data_assigned_and_computed_grad(x, &data),
        // (d₀ + x)·max(d)·x + max(x, |d₀|) + x^|d₀|.
        |x: f64| (1.5 + x) * 2.5 * x + x.max(1.5) + x.powf(1.5),
        &[0.7, 1.8],
    );
}

/// Clamped from below by a constant returned early; a closure's own `return` stays its own.
#[reverse_diff]
fn returns_constant_data(x: f64, #[no_grad] lo: f64, #[no_grad] data: &[f64]) -> f64 {
    if x < lo {
        return lo;
    }
    if x > 10.0 {
        return data[0];
    }
    let square = |t: f64| -> f64 {
        if t > 0.0 {
            return t * t;
        }
        t
    };
    square(x) + data[1]
}

#[test]
fn constant_data_is_returned_as_the_scalar() {
    let data = [1.5, -2.0];
    assert_eq!(returns_constant_data_grad(0.2, 0.5, &data), (0.5, 0.0));
    assert_eq!(returns_constant_data_grad(11.0, 0.5, &data), (1.5, 0.0));
    // x² - 2 at 1.8.
    let (value, derivative) = returns_constant_data_grad(1.8, 0.5, &data);
    assert!((value - (1.8 * 1.8 - 2.0)).abs() < 1e-12 && (derivative - 3.6).abs() < 1e-12);
    check_scalar(
        |x| returns_constant_data(x, 0.5, &data),
        |x| returns_constant_data_grad(x, 0.5, &data),
        1.8,
    );
}

/// Constant data a `let` binds as the function's value: an element of a copy, and a name
/// bound from a parameter's element, each past an early `return` of a scalar.
#[reverse_diff]
fn local_constant_data_as_the_value(x: f64, #[no_grad] data: &[f64]) -> f64 {
    let copy = data.to_vec();
    if x > 1.0 {
        return x * x;
    }
    if x < -1.0 {
        let first = data[0];
        return first + copy[1];
    }
    let second = copy[1];
    second
}

/// A parameter's constant data as the value where the body binds its name again: hidden by an
/// `if let`, and bound to a helper's result. (These compiled before the value of a `let` was
/// lifted; they guard the two ways of lifting the value against each other.)
#[reverse_diff]
fn hidden_parameter_as_the_value(x: f64, #[no_grad] lo: f64, #[no_grad] cap: Option<f64>) -> f64 {
    if let Some(lo) = cap {
        if x > lo {
            return x * x;
        }
    }
    lo
}

/// See [`hidden_parameter_as_the_value`].
#[reverse_diff]
fn rebound_parameter_as_the_value(x: f64, #[no_grad] lo: f64) -> f64 {
    if x > 2.0 {
        return x * x;
    }
    let lo = doubled(lo);
    lo
}

/// Twice `c`, a plain helper.
fn doubled(c: f64) -> f64 {
    2.0 * c
}

#[test]
fn parameter_data_bound_again_is_the_value_as_the_scalar() {
    let hidden = hidden_parameter_as_the_value_grad;
    assert_eq!(hidden(3.0, 1.5, Some(2.0)), (9.0, 6.0));
    assert_eq!(hidden(1.0, 1.5, Some(2.0)), (1.5, 0.0));
    let rebound = rebound_parameter_as_the_value_grad;
    assert_eq!(rebound(3.0, 1.5), (9.0, 6.0));
    assert_eq!(rebound(1.0, 1.5), (3.0, 0.0));
}

/// Branches that are all constant data as the value, and as a `return`'s.
#[reverse_diff]
fn constant_branches_as_the_value(x: f64, #[no_grad] data: &[f64], #[no_grad] lo: f64) -> f64 {
    if x > 5.0 {
        return if x > 10.0 { data[0] } else { lo };
    }
    if x > 0.0 {
        data[0]
    } else if x > -1.0 {
        lo
    } else {
        match data.len() {
            0 => lo,
            _ => data[1],
        }
    }
}

/// A `match` on an `Option` of constant data: its `None` arm's constant data beside a scalar.
#[reverse_diff]
fn optional_factor(x: f64, #[no_grad] factor: Option<f64>, #[no_grad] lo: f64) -> f64 {
    match factor {
        Some(v) => x * v,
        None => lo,
    }
}

#[test]
fn constant_branches_are_the_value_as_the_scalar() {
    assert_eq!(optional_factor_grad(2.0, Some(3.0), 0.5), (6.0, 3.0));
    assert_eq!(optional_factor_grad(2.0, None, 0.5), (0.5, 0.0));
    let data = [2.0, 3.0];
    let values: Vec<(f64, f64)> = [12.0, 7.0, 1.0, -0.5, -3.0]
        .iter()
        .map(|&x| constant_branches_as_the_value_grad(x, &data, 0.5))
        .collect();
    assert_eq!(
        values,
        [(2.0, 0.0), (0.5, 0.0), (2.0, 0.0), (0.5, 0.0), (3.0, 0.0)]
    );
}

/// Constant data as an element of a tuple or array the function returns, as the body's value,
/// as a branch's and as a `return`'s.
#[reverse_diff]
fn constant_elements_returned(x: f64, #[no_grad] c: f64) -> (f64, f64) {
    if x > 1.0 {
        return (c, x * x);
    }
    if x < -1.0 {
        (x, c)
    } else {
        (c * x, c)
    }
}

#[reverse_diff]
fn constant_element_of_an_array(x: f64, #[no_grad] c: f64) -> [f64; 2] {
    [c, x * x]
}

#[test]
fn constant_data_is_an_element_of_the_result() {
    let c = 3.0;
    for x in [2.0, -2.0, 0.5] {
        let cotangent = (0.7, -1.3);
        let (value, gradient) = constant_elements_returned_vjp(x, c, &cotangent);
        assert_eq!(value, constant_elements_returned(x, c));
        let dot = |x: f64| {
            let (a, b) = constant_elements_returned(x, c);
            cotangent.0 * a + cotangent.1 * b
        };
        assert!((gradient - central_derivative(dot, x, STEP)).abs() < 1e-6);
    }
    let (value, gradient) = constant_element_of_an_array_vjp(2.0, c, &[5.0, 0.5]);
    assert_eq!((value, gradient), ([3.0, 4.0], 2.0));
}

#[test]
fn local_constant_data_is_the_value_as_the_scalar() {
    let data = [1.5, -2.0];
    assert_eq!(
        local_constant_data_as_the_value_grad(0.5, &data),
        (-2.0, 0.0)
    );
    assert_eq!(
        local_constant_data_as_the_value_grad(-3.0, &data),
        (-0.5, 0.0)
    );
    assert_eq!(
        local_constant_data_as_the_value_grad(2.0, &data),
        (4.0, 4.0)
    );
}

/// `f64`'s methods as values over constant data and over scalars.
#[reverse_diff]
fn method_values(xs: &[f64], #[no_grad] data: &[f64]) -> f64 {
    let constants: f64 = data.iter().copied().map(f64::abs).sum();
    let largest = data
        .iter()
        .copied()
        .max_by(f64::total_cmp)
        .unwrap_or_default();
    let scalars: f64 = xs.iter().copied().map(f64::sin).sum();
    constants * scalars + largest * xs[0]
}

#[test]
fn methods_as_values_take_constant_data_and_scalars() {
    let (xs, data) = ([0.3, -1.2], [1.5, -2.0, 0.25]);
    let (value, gradient) = method_values_grad(&xs, &data);
    // Σ|d| = 3.75, max d = 1.5: 3.75 (sin x₀ + sin x₁) + 1.5 x₀.
    let expected = 3.75 * (0.3f64.sin() + (-1.2f64).sin()) + 1.5 * 0.3;
    assert!((value - expected).abs() < 1e-12, "{value} vs {expected}");
    let by_hand = [3.75 * 0.3f64.cos() + 1.5, 3.75 * (-1.2f64).cos()];
    for (got, want) in gradient.iter().zip(by_hand) {
        assert!((got - want).abs() < 1e-12, "{gradient:?} vs {by_hand:?}");
    }
}

/// The same calls on constant data reached through references (`data.iter()`).
#[reverse_diff]
fn calls_on_borrowed_constant_data(x: f64, #[no_grad] data: &[f64]) -> f64 {
    let mut total = 0.0;
    for d in data.iter() {
        total += d.max(x) * d.min(1.0);
    }
    total + data.iter().map(|d| d.max(0.0) + d.hypot(x)).sum::<f64>()
}

#[test]
fn calls_on_borrowed_constant_data_take_either_kind_of_argument() {
    let data = [1.5, -2.0, 0.3];
    check_by_hand(
        |x| calls_on_borrowed_constant_data(x, &data),
        |x| calls_on_borrowed_constant_data_grad(x, &data),
        |x: f64| {
            data.iter()
                .map(|d| d.max(x) * d.min(1.0) + d.max(0.0) + d.hypot(x))
                .sum::<f64>()
        },
        // Away from the kinks of `d.max(x)` (x = d).
        &[0.7, 1.8],
    );
}

/// Constant data bound where an ascription says `f64`: an array's elements, a tuple's.
#[reverse_diff]
fn ascribed_constant_data(x: f64, #[no_grad] data: &[f64]) -> f64 {
    let a: [f64; 3] = [data[0], x, data[1]];
    let (c, y): (f64, f64) = (data[0], x * 2.0);
    let (n, z): (usize, f64) = (data.len(), data[1]);
    a[0] * a[1] + a[2] * x + c * y + n as f64 * z * x
}

#[test]
fn constant_data_takes_an_ascribed_f64() {
    // 1.5x - 2x + 1.5·2x + 2·(-2)x = -1.5x.
    assert_eq!(ascribed_constant_data_grad(2.0, &[1.5, -2.0]), (-3.0, -1.5));
    assert_eq!(
        ascribed_constant_data_grad(-0.5, &[1.5, -2.0]),
        (0.75, -1.5)
    );
}

/// A copy of constant data bound where the ascription says a sequence of `f64`, whose elements
/// then take reals: an initial state evolved by a differentiable rate (explicit Euler), a
/// `Vec` from a clone, and an array from a reference to one.
#[reverse_diff]
#[allow(clippy::needless_range_loop)] // the index loop, as an integrator is often written
fn evolved_copies(k: f64, #[no_grad] y0: &[f64], #[no_grad] pair: &[f64; 2]) -> f64 {
    let mut y: Vec<f64> = y0.to_vec();
    for _ in 0..10 {
        for i in 0..y.len() {
            y[i] = y[i] - 0.1 * k * y[i];
        }
    }
    let data = y0.to_vec();
    let mut cloned: Vec<f64> = data.clone();
    cloned[1] *= k;
    let mut a: [f64; 2] = *pair;
    a[0] = a[0] * k * k;
    y.iter().sum::<f64>() + cloned[1] + a[0] + a[1] + data[0]
}

#[test]
fn copies_of_constant_data_ascribed_as_sequences_take_reals() {
    let (y0, pair) = ([1.0, 2.0, -0.5], [3.0, 4.0]);
    let f = |k: &[f64]| evolved_copies(k[0], &y0, &pair);
    check(
        f,
        |k| {
            let (value, derivative) = evolved_copies_grad(k[0], &y0, &pair);
            (value, vec![derivative])
        },
        &[0.7],
    );
    // Σ y0 (1 - k/10)^10 + 2k + 3k² + 4 + 1, and its derivative.
    let k: f64 = 0.7;
    let value = 2.5 * (1.0 - 0.1 * k).powi(10) + 2.0 * k + 3.0 * k * k + 5.0;
    let slope = -2.5 * (1.0 - 0.1 * k).powi(9) + 2.0 + 6.0 * k;
    let (got, derivative) = evolved_copies_grad(k, &y0, &pair);
    assert!((got - value).abs() < 1e-12 && (derivative - slope).abs() < 1e-12);
}

/// Sequences built from constant data and ascribed as sequences of `f64`, whose elements then
/// take reals: an array by `std::array::from_fn`, a `Vec` collected from a map (with and
/// without a turbofish, which also keeps a `let` without ascription constant data), part of a
/// slice copied, `to_owned`, the items copied and collected, and a `Vec` collected from
/// scalars.
#[reverse_diff]
#[allow(clippy::iter_cloned_collect)] // the forms under test
fn built_copies(k: f64, xs: &[f64], #[no_grad] points: &[f64]) -> f64 {
    let i = 1;
    let mut p: [f64; 3] = std::array::from_fn(|j| points[i * 3 + j]);
    p[0] *= k;
    let mut magnitudes: Vec<f64> = points.iter().map(|v| v.abs()).collect();
    magnitudes[1] *= k;
    let scaled: Vec<f64> = xs.iter().map(|x| x * k).collect();
    let mut named: Vec<f64> = points.iter().map(|v| v.abs()).collect::<Vec<f64>>();
    named[2] *= k;
    let plain = points.iter().map(|v| v.abs()).collect::<Vec<f64>>();
    let mut part: Vec<f64> = points[1..3].to_vec();
    let mut owned: Vec<f64> = points.to_owned();
    let mut copied: Vec<f64> = points.iter().copied().collect();
    let mut cloned: Vec<f64> = points[2..].iter().cloned().collect();
    part[0] *= k;
    owned[0] *= k;
    copied[0] *= k;
    cloned[1] *= k;
    let unchanged = copied.clone();
    p[0] + p[1]
        + p[2]
        + magnitudes[0]
        + magnitudes[1]
        + scaled[0] * scaled[1]
        + named[2] * plain[1]
        + part[0] * owned[0]
        + copied[0] * unchanged[0]
        + cloned[1] * k
}

#[test]
fn sequences_built_from_constant_data_take_reals() {
    let points = [1.0, -2.0, 3.0, 4.0, 5.0, 6.0];
    let f = |v: &[f64]| built_copies(v[0], &v[1..], &points);
    check(
        f,
        |v| {
            let (value, (dk, dxs)) = built_copies_grad(v[0], &v[1..], &points);
            (value, [vec![dk], dxs].concat())
        },
        &[0.7, 1.5, -0.5],
    );
}

/// Elements of constant data read through a reference (`*d`, `d` from `data.iter()` or a
/// closure's item): assigned to a scalar, a branch beside one, a local changed by constants,
/// and, over scalars, a `let` inlined into the sum's record.
#[reverse_diff]
fn dereferenced_elements(x: f64, xs: &[f64], #[no_grad] data: &[f64]) -> f64 {
    let mut best = x;
    for d in data {
        if *d > best {
            best = *d;
        }
    }
    let capped: f64 = data.iter().map(|d| if x > *d { x } else { *d }).sum();
    let mut acc = data[0];
    for d in data.iter() {
        acc = *d;
        acc += 0.5;
    }
    let mut total = 0.0;
    for v in xs.iter() {
        let value = *v;
        total += value * value + value.sin();
    }
    best + capped + acc * x + total
}

#[test]
fn dereferenced_elements_of_constant_data_and_of_scalars() {
    let (data, xs) = ([0.5, 2.5, -1.0], [0.3, -0.7, 1.1]);
    let f = |v: &[f64]| dereferenced_elements(v[0], &v[1..], &data);
    for x in [1.7, 3.0] {
        check(
            f,
            |v| {
                let (value, (dx, dxs)) = dereferenced_elements_grad(v[0], &v[1..], &data);
                (value, [vec![dx], dxs].concat())
            },
            &[x, xs[0], xs[1], xs[2]],
        );
    }
    // The loop over `xs` is one record ([`records`]): `value` inlined into the sum's terms.
    let total = |vars: &[ad::Var]| dereferenced_elements(vars[0], &vars[1..], &data);
    let mut point = vec![1.7];
    point.extend((0..100).map(|i| i as f64 * 0.01));
    let inputs = point.len();
    let per_call = records(&point, total);
    assert!(per_call < inputs, "{per_call} records for {inputs} inputs");
}

/// `f64`'s float constants bound by a `let` (fixed scalars), its integer constants, a method
/// path bound and not called, and constant data as the function's value.
#[reverse_diff]
fn named_f64_constants(x: f64, #[no_grad] c: f64) -> f64 {
    let tiny = f64::EPSILON;
    let floor = f64::MIN_POSITIVE;
    let digits = f64::MANTISSA_DIGITS as f64;
    let _unused = f64::abs;
    let mut m = c;
    m += tiny;
    m = m.max(tiny);
    let pair = [floor, c];
    if x > 0.0 {
        return x * (m + c.max(floor) + pair[1] + digits);
    }
    c
}

#[test]
fn f64_constants_bound_by_lets_and_constant_data_as_the_value() {
    let c = 0.25;
    // m = c + ε, and 53 mantissa digits.
    let slope = c + f64::EPSILON + c + c + 53.0;
    let (value, derivative) = named_f64_constants_grad(2.0, c);
    assert!((value - 2.0 * slope).abs() < 1e-12 && (derivative - slope).abs() < 1e-12);
    assert_eq!(named_f64_constants_grad(-1.0, c), (c, 0.0));
}

/// A closure bound with the function's own name: a call by that name is the closure's, which
/// takes what it is given.
#[reverse_diff]
fn square_plus(x: f64, #[no_grad] c: f64) -> f64 {
    let square_plus = |u, v| u * v;
    square_plus(x, x) + c
}

/// A nested `fn` with the function's own name, given constant data.
#[reverse_diff]
fn scaled_square(x: f64, #[no_grad] c: f64) -> f64 {
    fn scaled_square(a: f64, b: f64) -> f64 {
        a * b
    }
    x * scaled_square(c, c)
}

mod elsewhere {
    /// A plain helper of the same name as the function that imports it.
    pub fn imported(a: f64, b: f64) -> f64 {
        a * b
    }
}

/// An imported function with the function's own name, given constant data.
#[reverse_diff]
fn imported(x: f64, #[no_grad] c: f64) -> f64 {
    use elsewhere::imported;
    x * imported(c, c)
}

#[test]
fn a_name_bound_in_the_body_is_not_the_function_itself() {
    let c = 1.5;
    check_scalar(|x| square_plus(x, c), |x| square_plus_grad(x, c), 0.7);
    assert_eq!(square_plus_grad(0.5, c), (1.75, 1.0));
    check_scalar(|x| scaled_square(x, c), |x| scaled_square_grad(x, c), 0.7);
    assert_eq!(scaled_square_grad(0.5, c), (1.125, 2.25));
    check_scalar(|x| imported(x, c), |x| imported_grad(x, c), 0.7);
    assert_eq!(imported_grad(0.5, c), (1.125, 2.25));
}

/// A named constant for [`rescaled`].
const HALF: f64 = 0.5;

/// Arguments for a `#[no_grad]` `f64` in forms whose kind the macro cannot tell, left as
/// written: a named constant, `PI`, a branch, a block, an element of a literal array.
#[reverse_diff]
fn rescaled(a: &[f64], #[no_grad] s: f64, n: usize) -> f64 {
    if n == 0 {
        return a[0] * s;
    }
    let first: f64 = rescaled(a, HALF * s + std::f64::consts::PI, n - 1);
    let second: f64 = rescaled(
        a,
        if n > 2 {
            [0.5, 0.25][n % 2] * s
        } else {
            let h = s / 2.0;
            h * h
        },
        n - 1,
    );
    first * second + a[n] * s
}

#[test]
fn constant_arguments_of_unknown_kind_are_left_as_written() {
    let a = [0.5, -0.3, 0.8, 1.2];
    check(|a| rescaled(a, 1.5, 3), |a| rescaled_grad(a, 1.5, 3), &a);
}

/// A default for a `#[no_grad]` `Option<f64>`: `unwrap_or(1.0)` takes a plain `f64`.
#[reverse_diff]
fn with_default(x: &[f64], #[no_grad] scale: Option<f64>) -> f64 {
    let s = scale.unwrap_or(1.0);
    x.iter().map(|v| s * v.exp()).sum()
}

/// Elements of constant data given to its own methods: `unwrap_or` after `get(i).copied()`,
/// and `push`, `resize` and `insert` on a copy.
#[reverse_diff]
fn padded(x: &[f64], #[no_grad] data: &[f64], i: usize) -> f64 {
    let d = data.get(i).copied().unwrap_or(0.5);
    let mut copy = data.to_vec();
    copy.push(2.0);
    copy.resize(copy.len() + 2, 0.25);
    copy.insert(0, 3.0);
    let mut total = 0.0;
    for k in 0..x.len() {
        total += x[k] * copy[k % copy.len()] * d;
    }
    total
}

/// A fold from a literal over constant data, with a scalar in the closure: the literal stays
/// the scalar, as the accumulator is one.
#[reverse_diff]
fn folded(x: f64, #[no_grad] data: &[f64]) -> f64 {
    data.iter().fold(0.0, |acc, d| acc + d * x)
}

#[test]
fn methods_of_constant_data_take_plain_elements() {
    let x = [0.3, -0.2, 0.9];
    check(
        |x| with_default(x, Some(2.0)),
        |x| with_default_grad(x, Some(2.0)),
        &x,
    );
    check(
        |x| with_default(x, None),
        |x| with_default_grad(x, None),
        &x,
    );
    let data = [1.5, -0.5];
    // The copy is [3, 1.5, -0.5, 2, 0.25, 0.25]; d = data[0] = 1.5, or 0.5 past the end.
    let (_, gradient) = padded_grad(&x, &data, 0);
    assert_eq!(gradient, vec![4.5, 2.25, -0.75]);
    for i in [0, 1, 5] {
        check(|x| padded(x, &data, i), |x| padded_grad(x, &data, i), &x);
    }
    check_scalar(|x| folded(x, &data), |x| folded_grad(x, &data), 0.7);
}

/// A number of constant data that then takes a scalar: the macro writes `f64` in its `let`.
#[reverse_diff]
fn accumulated(x: f64, #[no_grad] data: &[f64]) -> f64 {
    let mut acc = data[0];
    acc = acc + x * 2.0;
    x * acc
}

/// An integrator's state copied from constant data, its elements then taking scalars by
/// index.
#[reverse_diff]
fn evolved(k: &[f64], #[no_grad] y0: &[f64], #[no_grad] dt: f64) -> f64 {
    let mut y = y0.to_vec();
    for _ in 0..20 {
        for i in 0..y.len() {
            y[i] = y[i] - dt * k[i % k.len()] * y[i];
        }
    }
    y.iter().map(|v| v * v).sum()
}

/// The same through `iter_mut`.
#[reverse_diff]
fn evolved_in_place(k: f64, #[no_grad] y0: &[f64], #[no_grad] dt: f64) -> f64 {
    let mut y = y0.to_vec();
    for _ in 0..20 {
        for v in y.iter_mut() {
            *v -= dt * k * *v;
        }
    }
    y.iter().sum()
}

/// A `Vec` started empty, given constant data first and scalars after.
#[reverse_diff]
fn pushed(x: f64, #[no_grad] data: &[f64]) -> f64 {
    let mut out = Vec::new();
    out.push(data[0]);
    out.push(x);
    out.push(x * data[1]);
    out.iter().map(|v| v * v).sum()
}

#[test]
fn locals_of_constant_data_that_take_scalars_hold_scalars() {
    let data = [1.5, 2.0];
    // x (1.5 + 2 x): 1.5 + 4 x.
    assert_eq!(accumulated_grad(0.5, &data), (1.25, 3.5));
    check_scalar(
        |x| accumulated(x, &data),
        |x| accumulated_grad(x, &data),
        0.5,
    );
    let (y0, k) = ([1.0, 2.0, -0.5], [0.5, 0.8]);
    check(
        |k| evolved(k, &y0, 0.01),
        |k| evolved_grad(k, &y0, 0.01),
        &k,
    );
    // Σ y0_i (1 - dt k)^20: -20 dt (1 - dt k)^19 Σ y0_i.
    let (value, derivative) = evolved_in_place_grad(0.5, &y0, 0.01);
    assert_relative_eq!(value, 2.5 * 0.995f64.powi(20), max_relative = 1e-14);
    assert_relative_eq!(
        derivative,
        -0.2 * 0.995f64.powi(19) * 2.5,
        max_relative = 1e-13
    );
    check_scalar(
        |k| evolved_in_place(k, &y0, 0.01),
        |k| evolved_in_place_grad(k, &y0, 0.01),
        0.5,
    );
    // 1.5² + x² + 4 x²: 10 x.
    assert_eq!(pushed_grad(0.7, &data).1, 7.0);
    check_scalar(|x| pushed(x, &data), |x| pushed_grad(x, &data), 0.7);
}

/// Pushes of what is not a scalar (a `bool`, a pair, a copy of constant data indexed by a
/// computed position) leave their `Vec`s as rustc infers them; a copy changed by constants
/// alone through `iter_mut` stays constant data (given to a plain helper over `f64`), while
/// another loop's item of the same name, and a closure's, take scalars.
#[reverse_diff]
fn pushes_of_other_values(x: f64, #[no_grad] y0: &[f64]) -> f64 {
    let mut mask = Vec::new();
    let mut pairs = Vec::new();
    let mut picks = Vec::new();
    for (i, &d) in y0.iter().enumerate() {
        mask.push(d > 0.0);
        pairs.push((i, d * x));
        picks.push(y0[(x.abs() * 2.0) as usize % y0.len()]);
    }
    let mut y = y0.to_vec();
    for v in y.iter_mut() {
        *v *= 2.0;
    }
    for v in y.iter_mut() {
        *v = *v * 0.5 + 1.0;
    }
    let mut z = [x; 2];
    for v in z.iter_mut() {
        *v -= 0.1 * x * *v;
    }
    z.iter_mut().for_each(|v| *v *= x);
    let kept: f64 = pairs.iter().filter(|p| mask[p.0]).map(|p| p.1).sum();
    kept * plain_sum(&y) + plain_sum(&picks) * z[0] + z[1]
}

/// A plain helper over `f64`.
fn plain_sum(values: &[f64]) -> f64 {
    values.iter().sum()
}

#[test]
fn pushes_and_item_writes_of_constants_keep_their_types() {
    let y0 = [1.5, -2.0, 0.5];
    check_scalar(
        |x| pushes_of_other_values(x, &y0),
        |x| pushes_of_other_values_grad(x, &y0),
        0.7,
    );
}

/// A number of constant data that takes a scalar through a method of two reals, and through a
/// branch: the largest of `data[0]` and `x d`, then of it and `x`.
#[reverse_diff]
fn largest_scaled(x: f64, #[no_grad] data: &[f64]) -> f64 {
    let mut largest = data[0];
    for &d in data {
        largest = largest.max(x * d);
    }
    let mut top = data[1];
    top = if x > top { x } else { top };
    largest * x + top
}

#[test]
fn numbers_of_constant_data_that_take_scalars_through_methods_and_branches() {
    let data = [1.5, 2.0, -3.0];
    // x = 1.7: largest = 2 x (3.4), top = 2: 2 x² + 2; derivative 4 x.
    let (value, derivative) = largest_scaled_grad(1.7, &data);
    assert_relative_eq!(value, 2.0 * 1.7 * 1.7 + 2.0, max_relative = 1e-15);
    assert_relative_eq!(derivative, 4.0 * 1.7, max_relative = 1e-15);
    for x in [-0.4, 0.3, 1.7, 2.5] {
        check_scalar(
            |x| largest_scaled(x, &data),
            |x| largest_scaled_grad(x, &data),
            x,
        );
    }
}

/// A harmonic oscillator stepped from a constant initial state held in an array parameter,
/// copied by value, and a copy of an array behind a reference: their `let`s take `[f64; 2]`.
#[reverse_diff]
fn oscillator(q: f64, #[no_grad] x0: [f64; 2], #[no_grad] dt: f64) -> f64 {
    let mut x = x0;
    for _ in 0..100 {
        x[0] += dt * x[1];
        x[1] -= dt * q * x[0];
    }
    x[0] * x[0] + x[1] * x[1]
}

#[reverse_diff]
fn copied_array(k: f64, #[no_grad] arr: &[f64; 2]) -> f64 {
    let mut a = *arr;
    a[1] += k;
    a[1] * a[0]
}

/// A copy of an array parameter assigned whole, each step.
#[reverse_diff]
fn sheared(q: f64, #[no_grad] x0: [f64; 2]) -> f64 {
    let mut x = x0;
    for _ in 0..3 {
        x = [x[0] + q * x[1], x[1] - q * x[0]];
    }
    x[0] * x[1]
}

#[test]
fn copies_of_array_parameters_that_take_scalars_hold_scalars() {
    check_scalar(
        |q| sheared(q, [1.0, 2.0]),
        |q| sheared_grad(q, [1.0, 2.0]),
        0.3,
    );
    check_scalar(
        |q| oscillator(q, [1.0, 0.0], 0.01),
        |q| oscillator_grad(q, [1.0, 0.0], 0.01),
        1.3,
    );
    // (3 + k) 2.
    assert_eq!(copied_array_grad(0.5, &[2.0, 3.0]), (7.0, 2.0));
}

/// The heat equation stepped with a double buffer: the state copied from constant data is
/// swapped with a buffer of scalars, and reassigned by a `collect` of scalars.
#[reverse_diff]
fn heat(kappa: f64, #[no_grad] u0: &[f64]) -> f64 {
    let n = u0.len();
    let mut u = u0.to_vec();
    let mut next = vec![0.0; n];
    for _ in 0..10 {
        for i in 1..n - 1 {
            next[i] = u[i] + kappa * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        }
        next[0] = u[0];
        next[n - 1] = u[n - 1];
        std::mem::swap(&mut u, &mut next);
    }
    let mut v = u0.to_vec();
    v = v.iter().map(|x| kappa * x).collect();
    u.iter().map(|x| x * x).sum::<f64>() + v[1]
}

#[test]
fn a_double_buffer_swapped_and_a_state_collected_hold_scalars() {
    let u0 = [0.0, 1.0, 3.0, 2.0, 0.5, 0.0];
    check_scalar(|k| heat(k, &u0), |k| heat_grad(k, &u0), 0.2);
}

/// Newton's iteration for √a from a guess given as a `#[no_grad]` `Option<f64>`: the number
/// unwrapped from it takes scalars, bound with its type written or without.
#[reverse_diff]
fn newton_root(a: f64, #[no_grad] guess: Option<f64>) -> f64 {
    let mut x = guess.unwrap_or(1.0);
    let mut y: f64 = guess.unwrap_or(2.0);
    for _ in 0..20 {
        x -= (x * x - a) / (2.0 * x);
        y = 0.5 * (y + a / y);
    }
    x + y
}

#[test]
fn numbers_unwrapped_from_constant_data_take_scalars() {
    for guess in [None, Some(1.5)] {
        let (value, derivative) = newton_root_grad(2.0, guess);
        // 2 √a, and 1 / √a.
        assert_relative_eq!(value, 2.0 * 2f64.sqrt(), max_relative = 1e-15);
        assert_relative_eq!(derivative, 1.0 / 2f64.sqrt(), max_relative = 1e-14);
        check_scalar(
            |a| newton_root(a, guess),
            |a| newton_root_grad(a, guess),
            2.0,
        );
    }
}

/// A plain helper outside the body, which the macro does not see.
fn gaussian(t: f64, width: f64) -> f64 {
    (-t * t / (2.0 * width * width)).exp()
}

/// Another annotated function with a `#[no_grad]` step.
#[reverse_diff]
fn euler_step(y: f64, #[no_grad] dt: f64) -> f64 {
    y - dt * y * y
}

/// Another annotated function whose parameters are all differentiable.
#[reverse_diff]
fn blend(a: f64, b: f64) -> f64 {
    a * 0.3 + b * b * 0.7
}

/// Numbers written as literals, beside a real, for functions the macro does not see: each
/// takes its parameter's type, `f64` for the `#[no_grad]` step (`0.01`, `-0.5`, `0.5 * 0.02`)
/// and for the plain helper beside constant data, the scalar for `blend`'s `b` and for
/// `f64::max`'s second operand; so does a number bound by `let` (`dt`, and `dt * 3.0`). `y`,
/// bound from a call, is the scalar by its type written.
#[reverse_diff]
fn literal_arguments(x: f64, #[no_grad] data: &[f64]) -> f64 {
    let dt = 0.01;
    let mut y: f64 = euler_step(x, dt);
    y = euler_step(y, -0.5) + euler_step(y, 0.5 * 0.02) + euler_step(x, dt * 3.0);
    y += blend(x, 2.0) + f64::max(x, 0.25) + blend(x * x, -(1.5));
    y * gaussian(data[0], 0.5)
}

fn literal_arguments_by_hand(x: f64, data: &[f64]) -> f64 {
    let step = |y: f64, dt: f64| y - dt * y * y;
    let blended = |a: f64, b: f64| a * 0.3 + b * b * 0.7;
    let mut y = step(x, 0.01);
    y = step(y, -0.5) + step(y, 0.5 * 0.02) + step(x, 0.01 * 3.0);
    y += blended(x, 2.0) + x.max(0.25) + blended(x * x, -1.5);
    y * gaussian(data[0], 0.5)
}

#[test]
fn literals_beside_a_scalar_take_the_parameters_type() {
    let data = [0.4];
    for x in [0.1, 0.7, -0.3] {
        assert_eq!(
            literal_arguments(x, &data).to_bits(),
            literal_arguments_by_hand(x, &data).to_bits()
        );
        check_scalar(
            |x| literal_arguments(x, &data),
            |x| literal_arguments_grad(x, &data),
            x,
        );
    }
}

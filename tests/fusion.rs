//! Statement-level records: `#[reverse_diff]` differentiates each arithmetic expression
//! symbolically and records it as one node. Checked against the same expressions recorded one
//! operation at a time (a plain generic function, which the macro never sees), against central
//! differences, and by counting the records.

mod common;

use ad::{reverse_diff, Dual, Real, Tape, Var};
use approx::assert_relative_eq;
use common::{assert_gradient_matches, check, records};

/// Defines `$fused` (annotated: its expressions are fused) and `$unfused` (a plain generic
/// function: one record per operation) from one body.
macro_rules! fused_and_unfused {
    ($fused:ident, $unfused:ident, |$x:ident, $y:ident| $body:expr) => {
        #[reverse_diff]
        fn $fused($x: f64, $y: f64) -> f64 {
            $body
        }

        fn $unfused<S: Real>($x: S, $y: S) -> S {
            $body
        }
    };
}

// Every operation the macro fuses, three expressions over `x` in (0, 1) and `y` in (1, 2).
fused_and_unfused!(exponentials, exponentials_unfused, |x, y| x.abs().sqrt()
    + x.cbrt() * y.exp()
    - x.exp2() / y.exp_m1()
    + x.ln() * y.log2()
    - y.log10()
    + x.ln_1p());

fused_and_unfused!(trigonometry, trigonometry_unfused, |x, y| x.sin() * y.cos()
    + x.tan()
    - x.asin() * x.acos()
    + y.atan() / x.sinh()
    + y.cosh()
    - x.tanh());

fused_and_unfused!(the_rest, the_rest_unfused, |x, y| x.asinh()
    + y.acosh() * x.atanh()
    - y.recip()
    + y.fract() * x.to_degrees()
    + y.to_radians()
    + (x * y).powi(3)
    - x % 0.3
    + -y);

/// `f(x, y)` and its gradient recorded by `record` on a fresh tape, with the number of nodes.
fn recorded(record: impl Fn(Var, Var) -> Var, x: f64, y: f64) -> (f64, [f64; 2], usize) {
    let tape = Tape::new();
    let (vx, vy) = (tape.var(x), tape.var(y));
    let out = record(vx, vy);
    tape.backward(out);
    (
        out.value(),
        [tape.adjoint(vx), tape.adjoint(vy)],
        tape.len() - 2,
    )
}

/// A function over `Var`.
type Recorded = fn(Var, Var) -> Var;

type Pair = (Recorded, Recorded, fn(f64, f64) -> f64);

const PAIRS: [Pair; 3] = [
    (exponentials, exponentials_unfused, exponentials),
    (trigonometry, trigonometry_unfused, trigonometry),
    (the_rest, the_rest_unfused, the_rest),
];

#[test]
fn each_expression_is_one_record_with_the_gradient_of_its_operations() {
    for (fused, unfused, primal) in PAIRS {
        // Away from the jumps of `x % 0.3` and `y.fract()`.
        for (x, y) in [(0.35, 1.4), (0.71, 1.05), (0.05, 1.9)] {
            let (value, gradient, records) = recorded(fused, x, y);
            let (unfused_value, unfused_gradient, unfused_records) = recorded(unfused, x, y);
            assert_eq!(records, 1, "one record for the whole expression");
            assert!(unfused_records > 10, "{unfused_records} records unfused");
            // Same operations on the same values: the same value bit for bit; the partials
            // are the same products, associated differently, so equal to rounding.
            assert_eq!(value.to_bits(), unfused_value.to_bits());
            assert_eq!(value.to_bits(), primal(x, y).to_bits());
            for (fused, unfused) in gradient.iter().zip(unfused_gradient) {
                assert_relative_eq!(*fused, unfused, max_relative = 1e-13);
            }
            // And both against central differences.
            assert_gradient_matches(|p| primal(p[0], p[1]), &[x, y], &gradient, 1e-6);
        }
    }
}

/// `f(x, y)` on `Dual<Var>` along `direction`, recorded by `record` on a fresh tape: the value,
/// the tangent, and the tangent's gradient by `(x, y)` (the Hessian times the direction) and by
/// the tangents (the gradient), with the number of nodes. With `recorded_tangents`, the
/// direction's entries are themselves recorded (as the tangent of a value computed inside a
/// function is), else constants (as `f_hvp` seeds them).
fn recorded_second(
    record: impl Fn(Dual<Var>, Dual<Var>) -> Dual<Var>,
    (x, y): (f64, f64),
    direction: [f64; 2],
    recorded_tangents: bool,
) -> (f64, f64, [f64; 4], usize) {
    let tape = Tape::new();
    let (vx, vy) = (tape.var(x), tape.var(y));
    let tangent = |t: f64| {
        if recorded_tangents {
            tape.var(t)
        } else {
            Var::constant(t)
        }
    };
    let (tx, ty) = (tangent(direction[0]), tangent(direction[1]));
    let inputs = tape.len();
    let out = record(Dual::new(vx, tx), Dual::new(vy, ty));
    let records = tape.len() - inputs;
    tape.backward(out.tangent);
    let adjoints = [vx, vy, tx, ty].map(|v| tape.adjoint(v));
    (out.value.value(), out.tangent.value(), adjoints, records)
}

/// Under `f_hvp` and `f_hessian` (`Dual<Var>`) each expression is two records, its value and
/// its tangent, whose partials its second closure gives over dual numbers; as written it
/// records a node for each operation of the value and several for its tangent. Both ways give
/// the same value, tangent, Hessian times the direction and gradient, directions constant or
/// recorded.
#[test]
fn under_reverse_over_forward_each_expression_is_two_records() {
    type Second = fn(Dual<Var>, Dual<Var>) -> Dual<Var>;
    let pairs: [(Second, Second); 3] = [
        (exponentials, exponentials_unfused),
        (trigonometry, trigonometry_unfused),
        (the_rest, the_rest_unfused),
    ];
    for (fused, unfused) in pairs {
        for point in [(0.35, 1.4), (0.71, 1.05), (0.05, 1.9)] {
            for direction in [[1.0, 0.0], [0.3, -1.7]] {
                for recorded_tangents in [false, true] {
                    let at = |f| recorded_second(f, point, direction, recorded_tangents);
                    let (value, tangent, adjoints, records) = at(fused);
                    let (unfused_value, unfused_tangent, unfused_adjoints, unfused_records) =
                        at(unfused);
                    assert_eq!(records, 2, "the value's record and the tangent's");
                    assert!(unfused_records > 20, "{unfused_records} records unfused");
                    assert_eq!(value.to_bits(), unfused_value.to_bits());
                    assert_relative_eq!(tangent, unfused_tangent, max_relative = 1e-13);
                    for (fused, unfused) in adjoints.iter().zip(unfused_adjoints) {
                        assert_relative_eq!(*fused, unfused, max_relative = 1e-12);
                    }
                }
            }
        }
    }
}

#[test]
fn plain_f64_computes_what_the_expression_computes() {
    for (x, y) in [(0.3, 1.4), (0.71, 1.05)] {
        assert_eq!(
            exponentials::<f64>(x, y).to_bits(),
            exponentials_unfused::<f64>(x, y).to_bits()
        );
        assert_eq!(
            trigonometry::<f64>(x, y).to_bits(),
            trigonometry_unfused::<f64>(x, y).to_bits()
        );
        assert_eq!(
            the_rest::<f64>(x, y).to_bits(),
            the_rest_unfused::<f64>(x, y).to_bits()
        );
    }
}

// The conventions at non-differentiable points hold inside a fused expression: a factor 0
// stops an infinite partial behind it (`0 · sqrt'(0)`), `sqrt` at 0 is +∞, `abs` at 0 is 0.
fused_and_unfused!(masked_root, masked_root_unfused, |x, y| x.sqrt() * 0.0
    + x * y);
fused_and_unfused!(root_at_zero, root_at_zero_unfused, |x, y| x.sqrt() * y
    + x.abs() * y);
fused_and_unfused!(quotient, quotient_unfused, |x, y| (x / y + 1.0)
    * (x * y).tanh());

#[test]
fn edge_points_give_what_one_record_per_operation_gives() {
    let edges = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.5,
        f64::INFINITY,
        -f64::INFINITY,
        f64::NAN,
    ];
    let pairs: [(Recorded, Recorded); 3] = [
        (masked_root, masked_root_unfused),
        (root_at_zero, root_at_zero_unfused),
        (quotient, quotient_unfused),
    ];
    for (fused, unfused) in pairs {
        for x in edges {
            for y in edges {
                let (value, gradient, _) = recorded(fused, x, y);
                let (unfused_value, unfused_gradient, _) = recorded(unfused, x, y);
                let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
                assert!(same(value, unfused_value), "value at ({x}, {y})");
                for (a, b) in gradient.iter().zip(unfused_gradient) {
                    assert!(
                        same(*a, b),
                        "gradient at ({x}, {y}): {gradient:?} vs {unfused_gradient:?}"
                    );
                }
            }
        }
    }
    // d/dx at x = 0 of sqrt(x)·0 + x·y: y, not ∞·0 = NaN.
    assert_eq!(masked_root_grad(0.0, 3.0).1, (3.0, 0.0));
    // sqrt at 0: +∞; abs at 0: 0.
    assert_eq!(root_at_zero_grad(0.0, 2.0).1, (f64::INFINITY, 0.0));
}

/// Names that change what they hold: the macro must follow Rust's scopes (an inner `x` that is
/// constant data, a closure parameter, a loop variable that is a reference, match bindings).
#[reverse_diff]
fn shadowing(x: f64, xs: &[f64], #[no_grad] data: &[f64]) -> f64 {
    let mut total = x * x + 1.0;
    {
        let x = data[0];
        total += x * total + data[1] * 2.0;
    }
    total += x * xs[0] * xs[1];
    let square_plus = |x: f64| x * x + 2.0 * x;
    total += square_plus(xs[0]) * total;
    for x in xs {
        total += x * x * 0.5;
    }
    match xs.len() {
        n if n > 1 => total += (n as f64) * total * 0.25,
        _ => {}
    }
    let (head, tail) = xs.split_at(1);
    let x = total * 0.1 + x;
    total + head[0] * tail[0] * x
}

fn shadowing_at(p: &[f64]) -> f64 {
    shadowing(p[0], &p[1..], &[0.7, -1.3])
}

#[test]
fn names_follow_rusts_scopes() {
    let point = [0.4, 1.2, -0.8, 0.3];
    let (value, (dx, dxs)) = shadowing_grad(point[0], &point[1..], &[0.7, -1.3]);
    assert_eq!(value.to_bits(), shadowing_at(&point).to_bits());
    let mut gradient = vec![dx];
    gradient.extend(dxs);
    assert_gradient_matches(shadowing_at, &point, &gradient, 1e-6);
}

/// Leaves of every kind in one expression: a cast, a real method that is not fused (`max`), an
/// element of constant data, a `#[no_grad]` scalar, a literal, `powi` with a computed exponent.
#[reverse_diff]
fn mixed_leaves(xs: &[f64], #[no_grad] weights: &[f64], #[no_grad] scale: f64, n: i32) -> f64 {
    let mut total = 0.0;
    for i in 0..xs.len() {
        total += weights[i] * xs[i].max(0.1) * (i as f64 + 1.0) / scale + xs[i].powi(n + 1) * 1.5
            - (weights[i] * scale).sqrt() * xs[i];
    }
    total
}

#[test]
fn leaves_of_every_kind() {
    let xs = [0.5, -0.2, 1.3];
    let weights = [2.0, 0.5, 1.5];
    check(
        |p| mixed_leaves(p, &weights, 1.7, 2),
        |p| mixed_leaves_grad(p, &weights, 1.7, 2),
        &xs,
    );
    // One record for the whole sum (`max` records nothing: it returns one of its operands).
    assert_eq!(records(&xs, |vars| mixed_leaves(vars, &weights, 1.7, 2)), 1);
}

/// Compound assignment into an element, and an expression of constants only (not recorded).
#[reverse_diff]
fn into_elements(xs: &[f64], #[no_grad] c: &[f64]) -> f64 {
    let mut ys = [0.0; 3];
    for i in 0..3 {
        ys[i] += xs[i] * xs[i] + c[i] * c[i] * 2.0;
        ys[i] *= xs[(i + 1) % 3] - 1.0;
    }
    ys[0] + ys[1] * ys[2]
}

#[test]
fn compound_assignment_into_elements() {
    let xs = [0.5, -0.2, 1.3];
    let c = [1.0, 2.0, 3.0];
    check(|p| into_elements(p, &c), |p| into_elements_grad(p, &c), &xs);
}

/// Loop variables: `x` over `xs.iter()` is `&S`, `&x` is `S`, through `enumerate`, `zip` and
/// `copied` too.
#[reverse_diff]
fn loops(xs: &[f64], ys: &[f64], #[no_grad] w: &[f64]) -> f64 {
    let mut total = 0.0;
    for x in xs.iter() {
        total += x * x * 0.5;
    }
    for (i, &x) in xs.iter().enumerate() {
        total += x * w[i] * total;
    }
    for (x, y) in xs.iter().zip(ys.iter()) {
        total += x * y - *x * 0.1;
    }
    for v in ys.iter().copied() {
        total += v.sin() * v;
    }
    // A borrowed slice (a parameter) yields references to scalars.
    for &y in ys {
        total += y * y * y;
    }
    total
}

#[test]
fn loop_variables() {
    let xs = [0.5, -0.2, 1.3];
    let ys = [0.7, 0.1, -0.4];
    let w = [2.0, 0.5, 1.5];
    let f = |p: &[f64]| loops(&p[..3], &p[3..], &w);
    let point = [xs, ys].concat();
    let (value, (dxs, dys)) = loops_grad(&xs, &ys, &w);
    assert_eq!(value.to_bits(), f(&point).to_bits());
    assert_gradient_matches(f, &point, &[dxs, dys].concat(), 1e-6);
    // The loops that only add to `total` make one record each for the whole sum; the second
    // reads `total`, so it makes one record per iteration.
    assert_eq!(
        records(&point, |vars| loops(&vars[..3], &vars[3..], &w)),
        1 + 3 + 1 + 1 + 1
    );
}

/// `let`s whose only uses are in the next statement are computed inside its record: a chain
/// of them, one used twice, one used again later (then it keeps its own record too).
#[reverse_diff]
fn inlined_lets(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() - 1 {
        let d = x[i + 1] - x[i] * x[i];
        let e = 1.0 - x[i];
        let f = d * e + 0.5;
        total += 100.0 * (d * d) + e * e + f.sin();
    }
    let g = x[0] * x[1] + 2.0;
    let h = g * g - x[2];
    let k = h * g + h.exp() * 0.01;
    if k > 1e300 {
        println!("{g}");
    }
    k
}

#[test]
fn lets_inlined_into_the_next_statement() {
    let x = [0.3, -1.2, 0.8, 2.0];
    check(inlined_lets, inlined_lets_grad, &x);
    // The loop is one sum (`d`, `e`, `f` computed in it); `h` and `g` are computed inside
    // `k`'s record, but `g` is read again after (and `k` too), so each keeps a record.
    assert_eq!(records(&x, inlined_lets), 1 + 1 + 1);
}

/// A `let` whose initialiser calls a transcendental and whose name is read twice keeps its
/// record, so the function computes it once: inlined, each read would compute it again from
/// the leaves. Read once, it is inlined (computed there, once); cheap initialisers are
/// inlined however often they are read.
#[reverse_diff]
fn transcendental_lets(x: &[f64]) -> f64 {
    let t = (x[0] * x[1]).tanh();
    let cell = t * x[2] + t;
    let d = x[0] - x[2].sqrt();
    let e = x[1].exp() * 2.0;
    cell * d * d + e
}

#[test]
fn transcendental_lets_keep_their_record() {
    let x = [0.3, -1.2, 0.8];
    check(transcendental_lets, transcendental_lets_grad, &x);
    // `t` keeps its record; `cell`, `d` and `e` (read once) are computed inside the last
    // statement's record, which reads `t` as a leaf: two records.
    assert_eq!(records(&x, transcendental_lets), 2);
}

/// What must stop inlining: a statement between that changes a leaf, a name the initialiser
/// reads bound again, a use in a nested block or inside a call's arguments.
#[reverse_diff]
fn not_inlined(x: &[f64]) -> f64 {
    let mut y = [x[0], x[1]];
    let d = y[0] * y[1] + 1.0;
    y[0] = 5.0 * x[1];
    let first = d * y[0] + 1.0;
    let a = x[0];
    let e = a * x[1] + 1.0;
    let a = x[1] * 3.0 + x[2];
    let second = e * a + 1.0;
    let f = x[2] * x[0] - 1.0;
    let third = {
        let scale = 2.0;
        f * scale + 1.0
    };
    let g = x[1] * x[1] + 0.5;
    let fourth = helper(g * 2.0 + 1.0, 3.0);
    first + second * third + fourth
}

#[reverse_diff]
fn helper(a: f64, b: f64) -> f64 {
    a * b + b
}

#[test]
fn inlining_stops_where_it_must() {
    let x = [0.3, -1.2, 0.8];
    check(not_inlined, not_inlined_grad, &x);
}

/// `*y += e` over `iter_mut()` and `&mut ys[a..]`, reading `xs[a..].iter()`.
#[reverse_diff]
fn through_mutable_references(xs: &[f64], #[no_grad] l: &[f64]) -> f64 {
    let mut ys = vec![0.0; xs.len()];
    for y in ys.iter_mut() {
        *y += 1.0;
    }
    let mut index = 0;
    for (column, x) in xs.iter().enumerate() {
        for y in &mut ys[column + 1..] {
            *y += l[index] * x * x;
            index += 1;
        }
    }
    for (y, x) in ys.iter_mut().zip(xs[1..].iter()) {
        *y *= x + 0.5;
    }
    ys.iter().map(|y| y * y).sum()
}

#[test]
fn mutable_references() {
    let xs = [0.3, -1.2, 0.8, 2.0];
    let l = [0.5, -0.25, 1.5, 2.0, 0.75, -1.0];
    check(
        |x| through_mutable_references(x, &l),
        |x| through_mutable_references_grad(x, &l),
        &xs,
    );
    // One record per `*y += ..` of the double loop (6), per `*y *= ..` (3), and the sum of
    // squares (its items join its record); the `+= 1.0` add a constant and record nothing.
    assert_eq!(
        records(&xs, |vars| through_mutable_references(vars, &l)),
        6 + 3 + 1
    );
}

/// `let`s with an `f64` ascription (`let v: Vec<f64>`, `let total: f64`): their names are
/// scalars and sequences of scalars, so the expressions over them fuse too.
#[reverse_diff]
fn ascribed_lets(xs: &[f64]) -> f64 {
    let mut v: Vec<f64> = vec![0.0; xs.len()];
    for i in 0..xs.len() {
        v[i] = xs[i] * xs[i] + 1.0;
    }
    let s: f64 = v[0] * v[1] - v[2];
    let mut total: f64 = 0.0;
    for x in v.iter() {
        total += x * s * 0.5;
    }
    total
}

#[test]
fn ascribed_lets_fuse() {
    let xs = [0.3, -1.2, 0.8];
    check(ascribed_lets, ascribed_lets_grad, &xs);
    // One record per element of `v`, one for `s`, one for the whole loop sum (one record per
    // operation would be 3 + 2 + 3·3).
    assert_eq!(records(&xs, ascribed_lets), 3 + 1 + 1);
}

/// `let`s computed from numbers alone (`h`, `half`, `t`) are fixed: a fused record takes their
/// values as constants, not as operands, and so do integer casts (`i as f64`).
#[reverse_diff]
fn fixed_in_loops(xs: &[f64], steps: usize) -> f64 {
    let h = 2.0 / steps as f64;
    let half: f64 = h * 0.5;
    let mut total = 0.0;
    for (i, x) in xs.iter().enumerate() {
        let t = i as f64;
        total += x * x * h + t * half * x;
    }
    for i in (0..xs.len()).rev() {
        total = total * h + xs[i] * (i as f64 + half);
    }
    total
}

/// Every other use of a fixed `let` still sees a scalar (a `Vec` of scalars, a mutable copy
/// that later takes reals, an argument of an annotated function), and a name that shadows one
/// with a real is a real again.
#[reverse_diff]
fn fixed_lets(xs: &[f64], steps: usize) -> f64 {
    let h = 2.0 / steps as f64;
    let half: f64 = h * 0.5;
    let mut scaled = Vec::new();
    scaled.extend([h, xs[2]]);
    let mut acc = h;
    acc += scaled[1] * xs[0];
    {
        let h = xs[1] * 0.5;
        acc += h * h * 3.0;
        acc += h * half;
    }
    for h in xs {
        acc += h * h * half;
    }
    let h = h * xs[2];
    acc * half + helper(h, xs[0]) + h * h * half
}

#[test]
fn fixed_lets_are_constants_of_the_records() {
    let xs = [0.3, -1.2, 0.8];
    for steps in [1, 4] {
        check(
            |p| fixed_in_loops(p, steps),
            |p| fixed_in_loops_grad(p, steps),
            &xs,
        );
        check(|p| fixed_lets(p, steps), |p| fixed_lets_grad(p, steps), &xs);
    }
    // The first loop's sum is one record, the second loop one per iteration.
    assert_eq!(records(&xs, |vars| fixed_in_loops(vars, 4)), 1 + 3);
}

/// A user type whose `len` is a scalar: `v.len() as f64` keeps its derivative (only the length
/// of a slice, array or `Vec` is an integer).
#[derive(Clone, Copy, Debug, PartialEq, ad::Differentiable)]
struct Planar<T> {
    x: T,
    y: T,
}

impl<T: Copy + std::ops::Mul<Output = T> + std::ops::Add<Output = T>> Planar<T> {
    fn len(&self) -> T {
        self.x * self.x + self.y * self.y
    }
}

#[reverse_diff]
fn user_len(v: Planar<f64>, w: f64) -> f64 {
    let inverse = 1.0 / v.len() as f64;
    inverse * w * w + v.len() as f64 * w * 2.0
}

/// Rebinds a name in a way the macro does not see into.
macro_rules! bind {
    ($name:ident = $value:expr) => {
        let $name = $value;
    };
}

/// Names a user macro or a `matches!` pattern binds again: no longer fixed, nor integers.
#[reverse_diff]
fn rebound(x: &[f64], i: usize) -> f64 {
    let h = 2.0;
    let mut total = h * x[0] * x[1] + i as f64 * x[0] * x[0];
    bind!(h = x[0] * 3.0);
    total += h * h * x[1];
    bind!(i = x[0] * 2.0);
    total += i as f64 * x[1] * x[1];
    let o = Some(x[1]);
    if matches!(o, Some(i) if i as f64 * x[0] + 1.0 > 0.0) {
        total += x[0];
    }
    total
}

#[test]
fn integers_and_fixed_lets_only_where_the_macro_sees_them() {
    let (v, w) = (Planar { x: 0.6, y: -1.1 }, 1.7);
    let (value, (dv, dw)) = user_len_grad(v, w);
    assert_eq!(value.to_bits(), user_len(v, w).to_bits());
    let f = |p: &[f64]| user_len(Planar { x: p[0], y: p[1] }, p[2]);
    common::assert_gradient_matches(f, &[0.6, -1.1, 1.7], &[dv.x, dv.y, dw], 1e-6);
    check(|p| rebound(p, 3), |p| rebound_grad(p, 3), &[0.7, -1.3]);
}

/// Closures of iterator adaptors: the item a closure of `map` (or `for_each`, `any`...)
/// receives has the kind a `for` loop over the same iterator gives it.
#[reverse_diff]
fn mapped(xs: &[f64], #[no_grad] c: f64) -> f64 {
    let exps: f64 = xs.iter().map(|x| (x - c).exp() * c).sum();
    let squares: f64 = xs.iter().copied().map(|x| x * x + 1.0).sum();
    let weighted: f64 = xs.iter().enumerate().map(|(i, x)| x * i as f64 - 1.0).sum();
    let mut last = 0.0;
    xs.iter().for_each(|&x| last = x * x - x);
    exps.ln() + squares * weighted + last
}

#[test]
fn closures_of_iterator_adaptors_fuse() {
    let xs = [0.3, -1.2, 0.8];
    check(|x| mapped(x, 2.0), |x| mapped_grad(x, 2.0), &xs);
    // Each mapped sum is one record, its items' leaves its operands (3); each call of the
    // `for_each` closure is one record (3); the last line one.
    assert_eq!(records(&xs, |vars| mapped(vars, 2.0)), 3 + 3 + 1);
}

/// `split_at_mut` of a subslice of scalars gives two sequences of scalars.
#[reverse_diff]
fn split_subslice(xs: &[f64]) -> f64 {
    let mut state: Vec<f64> = xs.to_vec();
    let (front, back) = state[1..].split_at_mut(2);
    for i in 0..2 {
        front[i] = front[i] * back[i] + back[i] * 2.0;
    }
    front[0] + front[1]
}

#[test]
fn halves_of_a_subslice_fuse() {
    let xs = [0.3, -1.2, 0.8, 2.0, -0.5];
    check(split_subslice, split_subslice_grad, &xs);
    // One record per assignment and one for the sum (one record per operation would be 2·3 + 1).
    assert_eq!(records(&xs, split_subslice), 2 + 1);
}

/// A fused record checks every leaf's session, wherever the foreign leaf stands among constant
/// and recorded ones (the record reports it after writing its slots).
#[test]
fn a_fused_record_rejects_a_var_of_another_tape() {
    #[reverse_diff]
    fn weighted(x: f64, y: f64, z: f64) -> f64 {
        x * y + 2.0 * z
    }
    let stale = common::stale_var();
    let tape = Tape::new();
    let fresh = tape.var(2.0);
    for leaves in [
        [fresh, stale, Var::constant(3.0)],
        [Var::constant(3.0), fresh, stale],
        [stale, Var::constant(3.0), fresh],
    ] {
        let payload = std::panic::catch_unwind(|| weighted(leaves[0], leaves[1], leaves[2]))
            .expect_err("a foreign leaf must panic");
        let message = common::panic_message(&*payload);
        assert!(
            message.contains("a Var from another tape was used"),
            "{message}"
        );
    }
    // The tape is still usable: d/dz of the record is 2.
    let z = tape.var(0.5);
    let value = weighted(fresh, Var::constant(1.0), z);
    tape.backward(value);
    assert_eq!(tape.adjoint(z), 2.0);
}

/// `d` bound again after `s` inlined the first `d`: the second `d`, inlined into the result,
/// reads `s`, which must keep its record.
#[reverse_diff]
fn rebinding_after_an_inlined_let(x: &[f64]) -> f64 {
    let d = x[0] - 1.0;
    let s = d * d;
    let d = s * 0.5;
    d * 1.0
}

#[test]
fn a_let_read_through_a_let_bound_again_keeps_its_record() {
    // ½ (x − 1)², at 3: value 2, derivative 2.
    assert_eq!(
        rebinding_after_an_inlined_let_grad(&[3.0]),
        (2.0, vec![2.0])
    );
}

/// Checks `vjp` (the tape, whatever the number of inputs) at `x`: its value against `f`'s bit
/// for bit, its gradient against central differences of `f` (tolerance 1e-6).
#[track_caller]
fn check_tape(f: impl Fn(&[f64]) -> f64, vjp: impl Fn(&[f64], &f64) -> (f64, Vec<f64>), x: &[f64]) {
    let (value, gradient) = vjp(x, &1.0);
    assert_eq!(value.to_bits(), f(x).to_bits(), "value");
    assert_gradient_matches(f, x, &gradient, 1e-6);
}

/// `σ(x) = 1 / (1 + e^(−x))`: a callee whose body the caller's macro does not see.
#[reverse_diff]
fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// `ln(1 + eˣ)`, written against num-traits alone.
fn softplus<T: ad::num_traits::Float>(x: T) -> T {
    (T::one() + x.exp()).ln()
}

/// lstm's gates: a call of a function on one scalar expression, bound by a `let` ascribed
/// `f64`, is one record with the argument (the callee's derivative from a pass over dual
/// numbers), and a `let` read once is computed inside the record that reads it. `cell` is
/// read twice, `out` twice: each keeps its record.
#[reverse_diff]
fn gates(x: &[f64]) -> f64 {
    let forget: f64 = sigmoid(x[0] * x[1] + x[2]);
    let input: f64 = sigmoid(x[3] * x[1] + x[2]);
    let soft: f64 = softplus(x[0] - x[3]);
    let change = (x[3] * x[0] + x[2]).tanh();
    let cell = x[4] * forget + input * change + soft;
    let out: f64 = sigmoid(cell * x[1]);
    out * cell.tanh() + out
}

/// [`gates`] with the calls written out, the same operations in the same order.
fn gates_by_hand(x: &[f64]) -> f64 {
    let sigmoid = |v: f64| 1.0 / (1.0 + (-v).exp());
    let forget = sigmoid(x[0] * x[1] + x[2]);
    let input = sigmoid(x[3] * x[1] + x[2]);
    let soft = (1.0 + (x[0] - x[3]).exp()).ln();
    let change = (x[3] * x[0] + x[2]).tanh();
    let cell = x[4] * forget + input * change + soft;
    let out = sigmoid(cell * x[1]);
    out * cell.tanh() + out
}

#[test]
fn a_call_on_one_scalar_expression_is_one_record_with_it() {
    let x = [0.3, -1.2, 0.8, 0.45, 1.7];
    assert_eq!(gates(&x).to_bits(), gates_by_hand(&x).to_bits());
    // Forward mode (five inputs) and the tape (`_vjp`), against central differences.
    check(gates, gates_grad, &x);
    check_tape(gates_by_hand, gates_vjp, &x);
    // `cell` (computing the four `let`s before it), `out`, and the result. As the callees'
    // bodies record (argument, then callee): forget 2, input 2, soft 4 (its argument, `exp`,
    // `+`, `ln`), change 1, cell 1, out 2, the result 1.
    assert_eq!(records(&x, gates), 3);
    // Under `Dual<Var>` each record is two, and the `let`s inlined record nothing.
    let tape = Tape::new();
    let duals: Vec<Dual<Var>> = x
        .iter()
        .map(|&v| Dual::new(tape.var(v), tape.var(1.0)))
        .collect();
    let inputs = tape.len();
    let out = gates(&duals);
    assert_eq!(tape.len() - inputs, 2 * 3);
    assert_eq!(out.value.value().to_bits(), gates_by_hand(&x).to_bits());
    // Second derivatives: the records' closures over `Second` run the callees on
    // `Dual<Dual<f64>>`.
    let (_, _, rows) = gates_hessian(&x);
    for (j, row) in rows.iter().enumerate() {
        for (i, entry) in row.iter().enumerate() {
            let gradient_entry = |p: &[f64]| gates_vjp(p, &1.0).1[i];
            let expected = common::central_gradient(gradient_entry, &x, 1e-5)[j];
            assert_relative_eq!(*entry, expected, epsilon = 1e-6, max_relative = 1e-6);
        }
    }
}

/// Calls not taken whole, each run as written: a local closure (the translator typed its
/// parameter as the scalar), a path of two segments, two arguments, no ascription, and an
/// argument that calls.
#[reverse_diff]
fn calls_as_written(x: &[f64]) -> f64 {
    let square = |u: f64| u * u;
    let a: f64 = square(x[0] * 2.0);
    let b: f64 = softplus(x[1] + x[0]) * 2.0;
    let c: f64 = self::sigmoid(x[2] * x[1]);
    let d: f64 = helper(x[1] * x[0], 3.0);
    let e = sigmoid(x[0] - x[2]);
    let f: f64 = sigmoid(sigmoid(x[0]) * x[1]);
    a + b + c + d + e + f
}

#[test]
fn calls_not_taken_whole_run_as_written() {
    let x = [0.3, -1.2, 0.8];
    check(calls_as_written, calls_as_written_grad, &x);
    check_tape(calls_as_written, calls_as_written_vjp, &x);
}

/// Generic callees whose parameter type only their result fixes (`T::Output`, `impl Into<S>`):
/// taken whole, they run on the record's dual numbers as they ran on the scalar.
fn square<T: std::ops::Mul + Copy>(x: T) -> T::Output {
    x * x
}

fn square_into<S: Real>(x: impl Into<S>) -> S {
    let v: S = x.into();
    v * v
}

#[reverse_diff]
fn generic_results(x: &[f64]) -> f64 {
    let a: f64 = square(x[0] * 2.0 + x[1]);
    let b: f64 = square_into(x[1] * x[2]);
    a * x[2] + b
}

#[test]
fn callees_whose_result_fixes_their_scalar() {
    let x = [0.3, -1.2, 0.8];
    check(generic_results, generic_results_grad, &x);
    check_tape(generic_results, generic_results_vjp, &x);
    // `b` is inlined into the result's record; `a`, read once too, as well.
    assert_eq!(records(&x, generic_results), 1);
}

/// A chain of costly `let`s each read once (an unrolled recurrence): a `let` whose initialiser
/// inlines a costly `let` is not offered itself, so each record holds at most two links and the
/// generated code grows with the chain's length, not its square.
#[reverse_diff]
fn costly_chain(x: &[f64]) -> f64 {
    let a1 = (x[0] * x[1]).tanh();
    let a2 = (a1 * x[2]).tanh();
    let a3: f64 = sigmoid(a2 * x[3]);
    let a4 = (a3 * x[0]).tanh();
    a4 * 2.0
}

#[test]
fn a_chain_of_costly_lets_inlines_one_link_at_a_time() {
    let x = [0.3, -1.2, 0.8, 0.5];
    check(costly_chain, costly_chain_grad, &x);
    let (_, gradient) = costly_chain_vjp(&x, &1.0);
    assert_gradient_matches(costly_chain, &x, &gradient, 1e-6);
    // `a2` (computing `a1` inside), `a4` (computing `a3` inside, from `a2`'s record) and the
    // result (reading `a4`'s): three records. Offering `a2` and `a4` too would make it one.
    assert_eq!(records(&x, costly_chain), 3);
}

/// Offers stay past a statement that only changes a variable they cannot reach (lstm's
/// `out_gate` past `cell[i] = ..`), and are withdrawn when they read that variable, or a view
/// of it (read after the change, the view would be borrowed across it: the borrow checker
/// would reject the generated code).
#[reverse_diff]
fn offers_past_assignments(x: &[f64]) -> f64 {
    let mut state = [x[0], x[1], x[2], x[3]];
    let (hidden, cell) = state.split_at_mut(2);
    let weight = &x[1..];
    let forget: f64 = sigmoid(x[0] * weight[0] + x[2]);
    let out: f64 = sigmoid(hidden[0] * weight[1] + x[3]);
    cell[0] = cell[0] * forget + x[1];
    hidden[0] = out * cell[0].tanh();
    let mut v = [x[0], x[1], x[2]];
    let view = &v[1..];
    let d = view[0] * 2.0 + x[0];
    let e = v[0] * 3.0 - x[1];
    v[1] = 5.0 * x[2];
    v[0] = v[1] * d + e;
    state[0] + state[2] + v[0]
}

/// [`offers_past_assignments`] over plain values, in its order.
fn offers_past_assignments_by_hand(x: &[f64]) -> f64 {
    let sigmoid = |v: f64| 1.0 / (1.0 + (-v).exp());
    let forget = sigmoid(x[0] * x[1] + x[2]);
    let out = sigmoid(x[0] * x[2] + x[3]);
    let cell = x[2] * forget + x[1];
    let hidden = out * cell.tanh();
    let d = x[1] * 2.0 + x[0];
    let e = x[0] * 3.0 - x[1];
    let v1 = 5.0 * x[2];
    hidden + cell + (v1 * d + e)
}

#[test]
fn offers_stay_past_assignments_they_cannot_reach() {
    let x = [0.3, -1.2, 0.8, 0.45];
    assert_eq!(
        offers_past_assignments(&x).to_bits(),
        offers_past_assignments_by_hand(&x).to_bits()
    );
    check(offers_past_assignments, offers_past_assignments_grad, &x);
    let (_, gradient) = offers_past_assignments_vjp(&x, &1.0);
    assert_gradient_matches(offers_past_assignments_by_hand, &x, &gradient, 1e-6);
    // `cell[0]` (computing `forget`), `hidden[0]` (computing `out`, kept past `cell[0] = ..`),
    // `d` and `e` (withdrawn by `v[1] = ..`: `e` reads `v`, `d` a view of it), `v[1]`, `v[0]`
    // and the result: 7 (8 when every assignment withdrew every offer: `out` kept a record).
    assert_eq!(records(&x, offers_past_assignments), 7);
}

/// An offer withdrawn by a change (`d` reads `a`) while offers reading it stay (`e` reads only
/// `d`, a scalar; `f` reads `e`): `f`, inlined after the change, inlines `e`, which reads `d` as
/// a variable, so `d` keeps its record.
#[reverse_diff]
fn withdrawn_under_staying_offers(x: &[f64]) -> f64 {
    let mut a = [x[0], x[1]];
    let d = a[0] * 2.0;
    let e = d + x[1];
    let f = e * x[0];
    a[0] = 5.0 * x[1];
    f * 3.0 + a[0]
}

#[test]
fn an_offer_read_by_staying_offers_keeps_its_record() {
    let x = [0.3, -1.2];
    let by_hand = |x: &[f64]| (x[0] * 2.0 + x[1]) * x[0] * 3.0 + 5.0 * x[1];
    let gradient = vec![3.0 * (4.0 * x[0] + x[1]), 3.0 * x[0] + 5.0];
    assert_eq!(withdrawn_under_staying_offers(&x), by_hand(&x));
    for (value, got) in [
        withdrawn_under_staying_offers_grad(&x),
        withdrawn_under_staying_offers_vjp(&x, &1.0),
    ] {
        assert_eq!(value, by_hand(&x));
        for (got, want) in got.iter().zip(&gradient) {
            assert_relative_eq!(got, want, max_relative = 1e-14);
        }
    }
}

/// From a review of d76105c, each of which an offer staying past the change got wrong (the
/// first silently, the others failing to compile): a raw identifier on the place, a move of
/// what an offer reads, a view pointed elsewhere after it was bound, and a view of a view whose
/// middle name was bound again.
#[reverse_diff]
#[allow(unused_assignments)]
fn offers_and_aliases(x: &[f64]) -> f64 {
    let mut s = x[0];
    let d = s * x[2];
    r#s = x[3];
    let first = d * s;
    let owned = vec![x[2], x[3]];
    let mut moved = vec![x[0], x[0]];
    let f = owned[0] * x[4];
    moved = owned;
    let second = f * moved[1];
    let a = vec![x[0], x[1]];
    let mut b = vec![x[2], x[3]];
    let mut w: &[f64] = &a;
    w = &b;
    let g = w[0] * x[4];
    b[0] = x[5];
    let third = g * b[0];
    let mut c = [x[1], x[2], x[3]];
    let view = &c[..];
    let inner = &view[1..];
    let view = 5.0;
    let h = inner[0] * x[3];
    c[1] = x[4];
    let fourth = h * c[1] + view;
    first + second + third + fourth
}

/// [`offers_and_aliases`] over plain values.
fn offers_and_aliases_by_hand(x: &[f64]) -> f64 {
    let first = x[0] * x[2] * x[3];
    let second = x[2] * x[4] * x[3];
    let third = x[2] * x[4] * x[5];
    let fourth = x[2] * x[3] * x[4] + 5.0;
    first + second + third + fourth
}

#[test]
fn offers_never_stay_past_a_change_they_may_read() {
    let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.5, 0.25, 1.5];
    assert_relative_eq!(
        offers_and_aliases(&x),
        offers_and_aliases_by_hand(&x),
        max_relative = 1e-15
    );
    let (value, gradient) = offers_and_aliases_vjp(&x, &1.0);
    assert_relative_eq!(value, offers_and_aliases_by_hand(&x), max_relative = 1e-15);
    assert_gradient_matches(offers_and_aliases_by_hand, &x, &gradient, 1e-6);
    let (_, gradient) = offers_and_aliases_grad(&x);
    assert_gradient_matches(offers_and_aliases_by_hand, &x, &gradient, 1e-6);
}

static mut SCALE: i32 = 1;

/// `v · SCALE`, reading a `static mut`.
fn scaled<T: ad::num_traits::Float>(v: T) -> T {
    // SAFETY: the one test that changes this static runs its calls one at a time.
    v * T::from(unsafe { SCALE }).unwrap()
}

/// Changes no offer can follow, in an `unsafe fn` (from the same review, both wrong
/// silently): a `static mut` that a callee taken whole reads, and a write through a raw
/// pointer into what an offer reads. Each withdraws every offer.
///
/// # Safety
///
/// Called one at a time (it writes `SCALE`).
#[reverse_diff]
#[allow(static_mut_refs)]
unsafe fn through_statics_and_pointers(x: &[f64]) -> f64 {
    SCALE = 2;
    let y: f64 = scaled(x[0] * x[1]);
    SCALE = 3;
    let first = y * x[2];
    let mut v = [x[0], x[1]];
    let p: *mut f64 = &mut v[0];
    let e = v[0] * x[2];
    *p = x[3];
    v[1] = e * x[4];
    first + v[0] + v[1]
}

#[test]
fn changes_through_statics_and_pointers_withdraw_the_offers() {
    let x = [1.0, 2.0, 3.0, 4.0, 5.0];
    // 2·x0·x1·x2 + x3 + x0·x2·x4.
    let gradient = vec![12.0 + 15.0, 6.0, 4.0 + 5.0, 1.0, 3.0];
    // SAFETY: this test is the only caller, and calls it one at a time.
    unsafe {
        assert_eq!(through_statics_and_pointers(&x), 31.0);
        assert_eq!(
            through_statics_and_pointers_grad(&x),
            (31.0, gradient.clone())
        );
        assert_eq!(through_statics_and_pointers_vjp(&x, &1.0), (31.0, gradient));
    }
}

static mut BUFFER: [f64; 2] = [2.0, 3.0];
static mut POINTER: *mut f64 = std::ptr::null_mut();

/// Puts `BUFFER` back as it starts.
fn reset_buffer() {
    // SAFETY: as in `times_pointee`.
    unsafe { BUFFER = [2.0, 3.0] };
}

/// `a` times what `POINTER` points to.
fn times_pointee<T: ad::num_traits::Float>(a: T) -> T {
    // SAFETY: `POINTER` points into `BUFFER` when this is called (below).
    a * T::from(unsafe { *POINTER }).unwrap()
}

static mut ANY: *const () = std::ptr::null();

/// `a` times the scalar `ANY` points to.
fn times_any<T: Copy + std::ops::Mul<Output = T>>(a: T) -> T {
    // SAFETY: `ANY` points to a `T` when this is called (below).
    a * unsafe { *(ANY as *const T) }
}

/// From a third review: callees taken whole that read, through pointers statics hold, what a
/// later statement changes: through a copy of such a pointer (`*q = ..`), and a local written
/// directly. In a function with `unsafe` code no offer stays past a change.
///
/// # Safety
///
/// Called one at a time (it writes `BUFFER`, `POINTER` and `ANY`).
#[reverse_diff]
#[allow(static_mut_refs)]
unsafe fn through_static_pointers(x: &[f64]) -> f64 {
    reset_buffer();
    POINTER = &raw mut BUFFER[0];
    let q = POINTER;
    let d: f64 = times_pointee(x[0] * x[1]);
    *q = BUFFER[1];
    let mut v = [x[0], x[1]];
    ANY = &raw const v[0] as *const ();
    let e: f64 = times_any(x[2]);
    v[0] = x[1] * 3.0;
    d * x[2] + e + v[0]
}

#[test]
fn a_function_with_unsafe_code_keeps_no_offer_past_a_change() {
    let x = [0.5, 2.0, 4.0];
    // 2·x0·x1·x2 + x2·x0 + 3·x1.
    let gradient = vec![16.0 + 4.0, 4.0 + 3.0, 2.0 + 0.5];
    // SAFETY: this test is the only caller, and calls it one at a time.
    unsafe {
        assert_eq!(through_static_pointers(&x), 16.0);
        assert_eq!(through_static_pointers_grad(&x), (16.0, gradient.clone()));
        assert_eq!(through_static_pointers_vjp(&x, &1.0), (16.0, gradient));
    }
}

/// Offers under raw identifiers (`r#type`), withdrawn by a later `let` and by an assignment.
#[reverse_diff]
fn raw_offers(x: &[f64]) -> f64 {
    let r#type = x[0] * 2.0;
    let mut v = [x[1], x[0]];
    let r#match = v[0] * x[1];
    v[0] = r#type + 1.0;
    r#match * v[0] + r#type
}

#[test]
fn offers_under_raw_identifiers() {
    let x = [0.3, -1.2];
    let by_hand = |x: &[f64]| x[1] * x[1] * (x[0] * 2.0 + 1.0) + x[0] * 2.0;
    check(raw_offers, raw_offers_grad, &x);
    assert_eq!(raw_offers(&x), by_hand(&x));
    let (value, gradient) = raw_offers_vjp(&x, &1.0);
    assert_eq!(value, by_hand(&x));
    assert_gradient_matches(by_hand, &x, &gradient, 1e-6);
}

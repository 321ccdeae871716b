//! Every method of stable `f64` (rustc 1.95) works on the scalar of a differentiated body, in
//! both forms (`x.m()` and `f64::m(x)`): each is called here with its value checked against
//! `f64`'s own, bit for bit, and its derivative against an analytic one or central differences
//! (`FD_TOLERANCE`); the methods that return no float (`to_bits`, `is_nan`, `total_cmp`...) read
//! the value. The last test checks that this walk, the macro's table of methods and the
//! runtime's name the same methods.

// `abs_sub` is deprecated but stable: it is walked too.
#![allow(deprecated)]

mod common;

use ad::reverse_diff;
use approx::assert_relative_eq;
use common::{assert_gradient_matches, check_scalar, FD_TOLERANCE};
use std::cmp::Ordering;
use std::num::FpCategory;

/// For a unary `f64` method: the method form `x.m()` and the path form `f64::m(x)`, and a
/// test that both return `f64`'s own result bit for bit and the analytic derivative.
macro_rules! unary_method {
    ($($name:ident at $x:expr => $derivative:expr;)*) => {
        /// The methods this table walks.
        const UNARY: &[&str] = &[$(stringify!($name)),*];
        $(
        mod $name {
            use super::*;

            #[reverse_diff]
            pub fn method_form(x: f64) -> f64 {
                x.$name()
            }

            #[reverse_diff]
            pub fn path_form(x: f64) -> f64 {
                f64::$name(x)
            }

            #[test]
            fn both_forms_match_f64_and_the_analytic_derivative() {
                let x: f64 = $x;
                let derivative: fn(f64) -> f64 = $derivative;
                for (form, value, dx) in [
                    ("method", method_form(x), method_form_grad(x)),
                    ("path", path_form(x), path_form_grad(x)),
                ] {
                    assert_eq!(value.to_bits(), x.$name().to_bits(), "{form} form value");
                    assert_eq!(dx.0.to_bits(), x.$name().to_bits(), "{form} form _grad value");
                    assert_relative_eq!(dx.1, derivative(x), max_relative = 1e-14);
                }
            }
        }
    )*
    };
}

unary_method! {
    abs at -0.7 => |_| -1.0;
    signum at 0.7 => |_| 0.0;
    sqrt at 2.0 => |x| 0.5 / x.sqrt();
    cbrt at 2.0 => |x| 1.0 / (3.0 * x.cbrt() * x.cbrt());
    exp at 0.6 => |x| x.exp();
    exp2 at 0.6 => |x| x.exp2() * std::f64::consts::LN_2;
    exp_m1 at 0.6 => |x| x.exp();
    ln at 1.3 => |x| 1.0 / x;
    log2 at 1.3 => |x| 1.0 / (x * std::f64::consts::LN_2);
    log10 at 1.3 => |x| 1.0 / (x * std::f64::consts::LN_10);
    ln_1p at 0.3 => |x| 1.0 / (1.0 + x);
    sin at 0.7 => |x| x.cos();
    cos at 0.7 => |x| -x.sin();
    tan at 0.7 => |x| 1.0 / (x.cos() * x.cos());
    asin at 0.3 => |x| 1.0 / (1.0 - x * x).sqrt();
    acos at 0.3 => |x| -1.0 / (1.0 - x * x).sqrt();
    atan at 0.3 => |x| 1.0 / (1.0 + x * x);
    sinh at 0.7 => |x| x.cosh();
    cosh at 0.7 => |x| x.sinh();
    tanh at 0.7 => |x| 1.0 - x.tanh() * x.tanh();
    asinh at 0.7 => |x| 1.0 / (x * x + 1.0).sqrt();
    acosh at 1.7 => |x| 1.0 / (x * x - 1.0).sqrt();
    atanh at 0.3 => |x| 1.0 / (1.0 - x * x);
    recip at 1.7 => |x| -1.0 / (x * x);
    floor at 2.3 => |_| 0.0;
    ceil at 2.3 => |_| 0.0;
    round at 2.3 => |_| 0.0;
    trunc at -2.3 => |_| 0.0;
    fract at 2.3 => |_| 1.0;
    to_degrees at 0.7 => |_| 180.0 / std::f64::consts::PI;
    to_radians at 40.0 => |_| std::f64::consts::PI / 180.0;
    round_ties_even at 2.5 => |_| 0.0;
    next_up at 0.7 => |_| 1.0;
    next_down at 0.7 => |_| 1.0;
}

/// For a binary `f64` method: `x.m(y)` and `f64::m(x, y)`, checked against `f64` (bit for bit)
/// and against central differences in both arguments.
macro_rules! binary_method {
    ($($name:ident at ($x:expr, $y:expr);)*) => {
        /// The methods this table walks.
        const BINARY: &[&str] = &[$(stringify!($name)),*];
        $(
        mod $name {
            use super::*;

            #[reverse_diff]
            pub fn method_form(x: f64, y: f64) -> f64 {
                x.$name(y)
            }

            #[reverse_diff]
            pub fn path_form(x: f64, y: f64) -> f64 {
                f64::$name(x, y)
            }

            #[test]
            fn both_forms_match_f64_and_central_differences() {
                let point: [f64; 2] = [$x, $y];
                let plain = point[0].$name(point[1]);
                let forms: [(&str, fn(f64, f64) -> f64, fn(f64, f64) -> (f64, (f64, f64))); 2] = [
                    ("method", method_form, method_form_grad),
                    ("path", path_form, path_form_grad),
                ];
                for (form, f, grad) in forms {
                    let (value, (dx, dy)) = grad(point[0], point[1]);
                    assert_eq!(f(point[0], point[1]).to_bits(), plain.to_bits(), "{form}");
                    assert_eq!(value.to_bits(), plain.to_bits(), "{form}");
                    assert_gradient_matches(|p| f(p[0], p[1]), &point, &[dx, dy], FD_TOLERANCE);
                }
            }
        }
    )*
    };
}

binary_method! {
    log at (2.5, 3.0);
    powf at (1.3, 2.7);
    atan2 at (0.8, -1.4);
    hypot at (0.8, -1.4);
    max at (0.8, -1.4);
    min at (0.8, -1.4);
    copysign at (0.8, -1.4);
    abs_sub at (0.8, -1.4);
    rem_euclid at (-7.3, 2.0);
    div_euclid at (-7.3, 2.0);
    midpoint at (0.8, -1.4);
}

#[reverse_diff]
fn powi_method(x: f64) -> f64 {
    x.powi(3) + x.powi(-2)
}

#[reverse_diff]
fn powi_path(x: f64) -> f64 {
    f64::powi(x, 3) + f64::powi(x, -2)
}

#[test]
fn powi_in_both_forms() {
    let x = 1.3f64;
    // Analytic: 3x² - 2x⁻³.
    let expected = 3.0 * x * x - 2.0 / (x * x * x);
    for (value, dx) in [powi_method_grad(x), powi_path_grad(x)] {
        assert_eq!(value.to_bits(), (x.powi(3) + x.powi(-2)).to_bits());
        assert_relative_eq!(dx, expected, max_relative = 1e-14);
    }
}

#[reverse_diff]
fn sin_cos_method(x: f64) -> f64 {
    let (s, c) = x.sin_cos();
    s * 2.0 + c
}

#[reverse_diff]
fn sin_cos_path(x: f64) -> f64 {
    let (s, c) = f64::sin_cos(x);
    s * 2.0 + c
}

#[test]
fn sin_cos_in_both_forms() {
    let x = 0.9f64;
    // Analytic: 2 cos x - sin x.
    for (value, dx) in [sin_cos_method_grad(x), sin_cos_path_grad(x)] {
        assert_eq!(value.to_bits(), (x.sin() * 2.0 + x.cos()).to_bits());
        assert_relative_eq!(dx, 2.0 * x.cos() - x.sin(), max_relative = 1e-14);
    }
}

/// A function of three reals, and its companion.
type Ternary = fn(f64, f64, f64) -> f64;
type TernaryGrad = fn(f64, f64, f64) -> (f64, (f64, f64, f64));

#[reverse_diff]
fn ternary_method(x: f64, a: f64, b: f64) -> f64 {
    x.clamp(a, b) + x.mul_add(a, b)
}

#[reverse_diff]
fn ternary_path(x: f64, a: f64, b: f64) -> f64 {
    f64::clamp(x, a, b) + f64::mul_add(x, a, b)
}

#[test]
fn clamp_and_mul_add_in_both_forms() {
    // Inside the interval, below it and above it.
    let points: [[f64; 3]; 3] = [[0.5, -1.0, 2.0], [-3.0, -1.0, 2.0], [2.5, -1.0, 2.0]];
    for point in points {
        let plain = point[0].clamp(point[1], point[2]) + point[0].mul_add(point[1], point[2]);
        let forms: [(Ternary, TernaryGrad); 2] = [
            (ternary_method, ternary_method_grad),
            (ternary_path, ternary_path_grad),
        ];
        for (f, grad) in forms {
            let (value, (dx, da, db)) = grad(point[0], point[1], point[2]);
            assert_eq!(value.to_bits(), plain.to_bits());
            assert_eq!(f(point[0], point[1], point[2]).to_bits(), plain.to_bits());
            assert_gradient_matches(|p| f(p[0], p[1], p[2]), &point, &[dx, da, db], FD_TOLERANCE);
        }
    }
}

#[reverse_diff]
fn with_constant_arguments(x: f64, #[no_grad] c: f64) -> f64 {
    x.powf(2.5) + x.max(c) + f64::min(x, 0.25) + x.clamp(0.0, c) + x.atan2(c) + x.log(c)
}

#[test]
fn methods_take_literals_and_constant_data_as_arguments() {
    check_scalar(
        |x| with_constant_arguments(x, 1.5),
        |x| with_constant_arguments_grad(x, 1.5),
        0.8,
    );
}

#[reverse_diff]
fn predicates_method(x: f64) -> f64 {
    let mut total = x;
    if x.is_nan() {
        total += 100.0;
    }
    if x.is_finite() {
        total *= 2.0;
    }
    if x.is_sign_negative() {
        total = -total;
    }
    total
}

#[reverse_diff]
fn predicates_path(x: f64) -> f64 {
    let mut total = x;
    if f64::is_nan(x) {
        total += 100.0;
    }
    if f64::is_finite(x) {
        total *= 2.0;
    }
    if f64::is_sign_negative(x) {
        total = -total;
    }
    total
}

#[test]
fn is_nan_is_finite_is_sign_negative_in_both_forms() {
    // Analytic: f = 2x for x ≥ 0 (finite), -2x for x < 0.
    for (x, value, slope) in [(1.5, 3.0, 2.0), (-1.5, 3.0, -2.0)] {
        assert_eq!(predicates_method_grad(x), (value, slope));
        assert_eq!(predicates_path_grad(x), (value, slope));
        assert_eq!(predicates_method(x), value);
    }
    assert!(predicates_method(f64::NAN).is_nan());
    assert_eq!(predicates_path(f64::INFINITY), f64::INFINITY);
}

/// Every method that returns no float, in both forms: the body turns what each reads into the
/// integer `k` and returns `x · k`, so the value of `_grad` (forward mode, on `Dual`) and of
/// `_vjp` (the tape, on `Var`) equal `f64`'s only if each reading does, and the derivative is `k`.
#[reverse_diff]
fn readings(x: f64, y: f64) -> f64 {
    let flags = [
        x.is_normal(),
        f64::is_normal(y),
        x.is_subnormal(),
        f64::is_subnormal(y * 1e-310),
        x.is_infinite(),
        f64::is_infinite(y),
        x.is_sign_positive(),
        f64::is_sign_positive(y),
        x.classify() == FpCategory::Normal,
        f64::classify(y) == FpCategory::Zero,
    ];
    let mut k = flags.iter().filter(|flag| **flag).count() as u64;
    k += (x.to_bits() ^ f64::to_bits(y)) % 1000;
    k += x.to_be_bytes()[1] as u64 + f64::to_be_bytes(y)[2] as u64;
    k += x.to_le_bytes()[6] as u64 + f64::to_le_bytes(y)[5] as u64;
    k += x.to_ne_bytes()[6] as u64 + f64::to_ne_bytes(y)[5] as u64;
    k += match (x.total_cmp(&y), f64::total_cmp(&y, &x)) {
        (Ordering::Less, Ordering::Greater) => 1000,
        (Ordering::Greater, Ordering::Less) => 2000,
        _ => 3000,
    };
    // SAFETY: `x` and `y` are finite and in range of both integer types.
    k += unsafe { x.to_int_unchecked::<u64>() + f64::to_int_unchecked::<u32>(y) as u64 };
    x * k as f64
}

/// Methods that return no float (checked by `readings`) or take more than one argument.
const OTHER: &[&str] = &[
    "is_nan",
    "is_finite",
    "is_infinite",
    "is_normal",
    "is_subnormal",
    "classify",
    "is_sign_negative",
    "is_sign_positive",
    "to_bits",
    "to_be_bytes",
    "to_le_bytes",
    "to_ne_bytes",
    "total_cmp",
    "to_int_unchecked",
    "powi",
    "sin_cos",
    "clamp",
    "mul_add",
];

#[test]
fn methods_returning_no_float_read_the_value() {
    for (x, y) in [(3.7, 12.25), (12.25, 3.7), (5.5, 0.0)] {
        let plain = readings(x, y);
        let k = plain / x;
        assert_eq!(k, k.round(), "k is an integer");
        let (value, (dx, dy)) = readings_grad(x, y);
        assert_eq!(
            value.to_bits(),
            plain.to_bits(),
            "forward mode at ({x}, {y})"
        );
        assert_eq!((dx, dy), (k, 0.0));
        let (value, (dx, dy)) = readings_vjp(x, y, &1.0);
        assert_eq!(value.to_bits(), plain.to_bits(), "tape at ({x}, {y})");
        assert_eq!((dx, dy), (k, 0.0));
    }
}

/// The smallest element plus twice the largest, by sorting a local copy with `total_cmp` in both
/// forms.
#[reverse_diff]
fn extremes(xs: &[f64]) -> f64 {
    let mut sorted = xs.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let mut descending = xs.to_vec();
    descending.sort_by(|a, b| f64::total_cmp(b, a));
    sorted[0] + 2.0 * descending[0]
}

#[test]
fn sort_by_total_cmp() {
    let xs = [0.5, -1.25, 3.0, 2.0];
    let (value, dxs) = extremes_grad(&xs);
    assert_eq!(value, -1.25 + 6.0);
    assert_eq!(dxs, vec![0.0, 1.0, 2.0, 0.0]);
}

#[test]
fn the_walk_the_macro_and_the_runtime_know_the_same_methods() {
    let sorted = |names: &[&'static str]| {
        let mut names = names.to_vec();
        names.sort_unstable();
        names
    };
    let known_to_the_macro = sorted(ad::__real_methods!());
    let offered_by_the_runtime = sorted(ad::Var::F64_METHODS);
    assert_eq!(known_to_the_macro, offered_by_the_runtime);
    // `to_int_unchecked` is the one method the macro calls on the value (its target types are
    // named by an unstable trait): walked here, in no trait.
    let walked = sorted(&[UNARY, BINARY, OTHER].concat());
    let mut expected = offered_by_the_runtime;
    expected.push("to_int_unchecked");
    assert_eq!(walked, sorted(&expected));
}

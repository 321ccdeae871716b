//! The documented convention at every point where a derivative does not exist or is infinite
//! (the list is the doc comment at the top of `ad-runtime/src/scalar/rules.rs`).
//!
//! Each test is a table: one row per point, the derivative `_grad` returns next to the expected
//! one. Expected values are either the stated convention (rows say "convention") or the
//! analytic derivative at that point. A failing test lists every failing row by name.

use ad::{reverse_diff, Dual, Lanes, Real, Tape, Var};

/// The `_grad` of a function of one scalar: its value and derivative.
type ScalarGrad = fn(f64) -> (f64, f64);

/// Whether `got` is `want`: NaN for NaN, the same infinity for an infinity, exactly 0 for 0, and
/// within a few units in the last place otherwise (relative, so tiny expected values count: the
/// finite expectations are analytic values the runtime reaches in a few roundings).
fn matches(got: f64, want: f64) -> bool {
    if want.is_nan() {
        got.is_nan()
    } else if want.is_infinite() {
        got == want
    } else {
        (got - want).abs() <= 4.0 * f64::EPSILON * want.abs()
    }
}

/// Asserts every row `(name, derivative from _grad, expected derivative)`, and on failure names
/// each failing row.
#[track_caller]
fn check<Name: AsRef<str>>(rows: &[(Name, f64, f64)]) {
    let failures: Vec<String> = rows
        .iter()
        .filter(|(_, got, want)| !matches(*got, *want))
        .map(|(name, got, want)| {
            let name = name.as_ref();
            format!("  {name}: got {got:e}, expected {want:e}")
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} rows failed:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}

/// The derivative of a one-argument function's `_grad`.
fn d1(grad: ScalarGrad, x: f64) -> f64 {
    grad(x).1
}

// ---------------------------------------------------------------------------------------------
// abs and copysign

#[reverse_diff]
fn abs_of(x: f64) -> f64 {
    x.abs()
}

#[reverse_diff]
fn copysign_of(x: f64, sign: f64) -> f64 {
    x.copysign(sign)
}

#[test]
fn abs_and_copysign() {
    let copysign = |x, sign| copysign_of_grad(x, sign).1;
    check(&[
        ("abs at 0 (convention: 0)", d1(abs_of_grad, 0.0), 0.0),
        ("abs at -0 (convention: 0)", d1(abs_of_grad, -0.0), 0.0),
        ("abs at 2", d1(abs_of_grad, 2.0), 1.0),
        ("abs at -2", d1(abs_of_grad, -2.0), -1.0),
        ("abs at NaN", d1(abs_of_grad, f64::NAN), f64::NAN),
        (
            "copysign(0, -1) d/dx (convention: 0)",
            copysign(0.0, -1.0).0,
            0.0,
        ),
        ("copysign(2, -1) d/dx", copysign(2.0, -1.0).0, -1.0),
        ("copysign(-2, -1) d/dx", copysign(-2.0, -1.0).0, 1.0),
        ("copysign(-2, 1) d/dx", copysign(-2.0, 1.0).0, -1.0),
        (
            "copysign d/dsign (piecewise constant)",
            copysign(2.0, -1.0).1,
            0.0,
        ),
    ]);
}

// ---------------------------------------------------------------------------------------------
// max, min, clamp

#[reverse_diff]
fn max_of(x: f64, y: f64) -> f64 {
    x.max(y)
}

#[reverse_diff]
fn min_of(x: f64, y: f64) -> f64 {
    x.min(y)
}

#[reverse_diff]
fn max_with_nan_constant(x: f64) -> f64 {
    x.max(f64::NAN)
}

#[reverse_diff]
fn min_with_nan_constant(x: f64) -> f64 {
    x.min(f64::NAN)
}

#[reverse_diff]
fn clamp_of(x: f64, low: f64, high: f64) -> f64 {
    x.clamp(low, high)
}

#[test]
fn max_and_min() {
    let nan = f64::NAN;
    let max = |x, y| max_of_grad(x, y).1;
    let min = |x, y| min_of_grad(x, y).1;
    check(&[
        ("max tie d/dself (convention: 1)", max(1.0, 1.0).0, 1.0),
        ("max tie d/dother (convention: 0)", max(1.0, 1.0).1, 0.0),
        ("max(3, 2) d/dself", max(3.0, 2.0).0, 1.0),
        ("max(3, 2) d/dother", max(3.0, 2.0).1, 0.0),
        ("max(1, 2) d/dself", max(1.0, 2.0).0, 0.0),
        ("max(1, 2) d/dother", max(1.0, 2.0).1, 1.0),
        ("max(1, NaN) d/dself (NaN ignored)", max(1.0, nan).0, 1.0),
        ("max(1, NaN) d/dother (NaN ignored)", max(1.0, nan).1, 0.0),
        ("max(NaN, 1) d/dself (NaN ignored)", max(nan, 1.0).0, 0.0),
        ("max(NaN, 1) d/dother (NaN ignored)", max(nan, 1.0).1, 1.0),
        (
            "x.max(f64::NAN) (NaN constant ignored)",
            d1(max_with_nan_constant_grad, 1.0),
            1.0,
        ),
        ("min tie d/dself (convention: 1)", min(1.0, 1.0).0, 1.0),
        ("min tie d/dother (convention: 0)", min(1.0, 1.0).1, 0.0),
        ("min(3, 2) d/dself", min(3.0, 2.0).0, 0.0),
        ("min(3, 2) d/dother", min(3.0, 2.0).1, 1.0),
        ("min(1, 2) d/dself", min(1.0, 2.0).0, 1.0),
        ("min(1, 2) d/dother", min(1.0, 2.0).1, 0.0),
        ("min(1, NaN) d/dself (NaN ignored)", min(1.0, nan).0, 1.0),
        ("min(1, NaN) d/dother (NaN ignored)", min(1.0, nan).1, 0.0),
        ("min(NaN, 1) d/dself (NaN ignored)", min(nan, 1.0).0, 0.0),
        ("min(NaN, 1) d/dother (NaN ignored)", min(nan, 1.0).1, 1.0),
        (
            "x.min(f64::NAN) (NaN constant ignored)",
            d1(min_with_nan_constant_grad, 1.0),
            1.0,
        ),
    ]);
    // The value ignores the NaN too, as f64::max/min do.
    assert_eq!(max_of_grad(1.0, nan).0, 1.0);
    assert_eq!(min_of_grad(nan, 1.0).0, 1.0);
}

#[test]
fn clamp_at_and_between_bounds() {
    let clamp = |x, low, high| clamp_of_grad(x, low, high).1;
    check(&[
        (
            "clamp at low bound d/dx (convention: 1)",
            clamp(0.0, 0.0, 1.0).0,
            1.0,
        ),
        (
            "clamp at low bound d/dlow (convention: 0)",
            clamp(0.0, 0.0, 1.0).1,
            0.0,
        ),
        ("clamp at low bound d/dhigh", clamp(0.0, 0.0, 1.0).2, 0.0),
        (
            "clamp at high bound d/dx (convention: 1)",
            clamp(1.0, 0.0, 1.0).0,
            1.0,
        ),
        ("clamp at high bound d/dlow", clamp(1.0, 0.0, 1.0).1, 0.0),
        (
            "clamp at high bound d/dhigh (convention: 0)",
            clamp(1.0, 0.0, 1.0).2,
            0.0,
        ),
        ("clamp inside d/dx", clamp(0.5, 0.0, 1.0).0, 1.0),
        ("clamp inside d/dlow", clamp(0.5, 0.0, 1.0).1, 0.0),
        ("clamp inside d/dhigh", clamp(0.5, 0.0, 1.0).2, 0.0),
        ("clamp below d/dx", clamp(-1.0, 0.0, 1.0).0, 0.0),
        ("clamp below d/dlow", clamp(-1.0, 0.0, 1.0).1, 1.0),
        ("clamp below d/dhigh", clamp(-1.0, 0.0, 1.0).2, 0.0),
        ("clamp above d/dx", clamp(2.0, 0.0, 1.0).0, 0.0),
        ("clamp above d/dlow", clamp(2.0, 0.0, 1.0).1, 0.0),
        ("clamp above d/dhigh", clamp(2.0, 0.0, 1.0).2, 1.0),
        (
            "clamp with low = high = x d/dx",
            clamp(0.5, 0.5, 0.5).0,
            1.0,
        ),
    ]);
}

// ---------------------------------------------------------------------------------------------
// floor, ceil, round, trunc, signum (piecewise constant) and fract

#[reverse_diff]
fn floor_of(x: f64) -> f64 {
    x.floor()
}

#[reverse_diff]
fn ceil_of(x: f64) -> f64 {
    x.ceil()
}

#[reverse_diff]
fn round_of(x: f64) -> f64 {
    x.round()
}

#[reverse_diff]
fn trunc_of(x: f64) -> f64 {
    x.trunc()
}

#[reverse_diff]
fn signum_of(x: f64) -> f64 {
    x.signum()
}

#[reverse_diff]
fn fract_of(x: f64) -> f64 {
    x.fract()
}

#[test]
fn piecewise_constant_functions_have_derivative_zero() {
    // Integers (where the functions jump), a half (round's tie), and ordinary points.
    let points = [-1.0, 0.0, -0.0, 2.0, 2.5, -2.5, 2.3, -0.7];
    let functions: [(&str, ScalarGrad); 5] = [
        ("floor", floor_of_grad),
        ("ceil", ceil_of_grad),
        ("round", round_of_grad),
        ("trunc", trunc_of_grad),
        ("signum", signum_of_grad),
    ];
    let mut rows = Vec::new();
    for (name, grad) in functions {
        for x in points {
            rows.push((format!("{name} at {x:?} (convention: 0)"), grad(x).1, 0.0));
        }
    }
    check(&rows);
}

#[test]
fn fract_has_derivative_one() {
    // fract x = x − trunc x, and trunc has derivative 0 (integers included).
    check(&[
        ("fract at 2 (convention: 1)", d1(fract_of_grad, 2.0), 1.0),
        ("fract at 0 (convention: 1)", d1(fract_of_grad, 0.0), 1.0),
        ("fract at 2.3", d1(fract_of_grad, 2.3), 1.0),
        ("fract at -0.7", d1(fract_of_grad, -0.7), 1.0),
    ]);
}

// ---------------------------------------------------------------------------------------------
// sqrt, cbrt, ln, ln_1p

#[reverse_diff]
fn sqrt_of(x: f64) -> f64 {
    x.sqrt()
}

#[reverse_diff]
fn cbrt_of(x: f64) -> f64 {
    x.cbrt()
}

#[reverse_diff]
fn ln_of(x: f64) -> f64 {
    x.ln()
}

#[reverse_diff]
fn log2_of(x: f64) -> f64 {
    x.log2()
}

#[reverse_diff]
fn log10_of(x: f64) -> f64 {
    x.log10()
}

#[reverse_diff]
fn ln_1p_of(x: f64) -> f64 {
    x.ln_1p()
}

#[test]
fn roots_at_zero() {
    let inf = f64::INFINITY;
    check(&[
        ("sqrt at 0 (convention: +inf)", d1(sqrt_of_grad, 0.0), inf),
        ("sqrt at -0 (convention: +inf)", d1(sqrt_of_grad, -0.0), inf),
        (
            "sqrt at -1 (outside the domain: NaN)",
            d1(sqrt_of_grad, -1.0),
            f64::NAN,
        ),
        ("sqrt at 4", d1(sqrt_of_grad, 4.0), 0.25),
        ("cbrt at 0 (convention: +inf)", d1(cbrt_of_grad, 0.0), inf),
        ("cbrt at -0 (convention: +inf)", d1(cbrt_of_grad, -0.0), inf),
        ("cbrt at 8", d1(cbrt_of_grad, 8.0), 1.0 / 12.0),
        ("cbrt at -8", d1(cbrt_of_grad, -8.0), 1.0 / 12.0),
    ]);
}

#[test]
fn logarithms_at_zero_and_near_zero() {
    let inf = f64::INFINITY;
    let x = 1e-15;
    check(&[
        ("ln at 0 (1/x: +inf)", d1(ln_of_grad, 0.0), inf),
        ("ln at 2", d1(ln_of_grad, 2.0), 0.5),
        ("log2 at 0 (+inf)", d1(log2_of_grad, 0.0), inf),
        (
            "log2 at 2",
            d1(log2_of_grad, 2.0),
            0.5 / std::f64::consts::LN_2,
        ),
        ("log10 at 0 (+inf)", d1(log10_of_grad, 0.0), inf),
        (
            "log10 at 10",
            d1(log10_of_grad, 10.0),
            0.1 / std::f64::consts::LN_10,
        ),
        // 1/(1 + x) = 1 − x + x² − …; 1 − x is exact to well below an ulp here.
        ("ln_1p at 1e-15", d1(ln_1p_of_grad, x), 1.0 - x),
        ("ln_1p at 0", d1(ln_1p_of_grad, 0.0), 1.0),
        ("ln_1p at -1 (1/(1+x): +inf)", d1(ln_1p_of_grad, -1.0), inf),
    ]);
    // The derivative near 0 must see x at all: strictly below 1.
    assert!(d1(ln_1p_of_grad, x) < 1.0);
    // The value, bit for bit: 1/(1 + x) in f64, where 1 + 10⁻¹⁵ rounds to 1 + 5·2⁻⁵²
    // and its reciprocal to 0.9999999999999989 (one ulp below 1 − 10⁻¹⁵).
    assert_eq!(d1(ln_1p_of_grad, x), 0.9999999999999989);
}

// ---------------------------------------------------------------------------------------------
// powi and powf

#[reverse_diff]
fn powi_0(x: f64) -> f64 {
    x.powi(0)
}

#[reverse_diff]
fn powi_1(x: f64) -> f64 {
    x.powi(1)
}

#[reverse_diff]
fn powi_2(x: f64) -> f64 {
    x.powi(2)
}

#[reverse_diff]
fn powi_minus_1(x: f64) -> f64 {
    x.powi(-1)
}

#[reverse_diff]
fn powi_min(x: f64) -> f64 {
    x.powi(i32::MIN)
}

#[reverse_diff]
fn powf_of(x: f64, exponent: f64) -> f64 {
    x.powf(exponent)
}

#[test]
fn integer_powers_at_zero() {
    check(&[
        ("powi(0) at 0 (convention: 0)", d1(powi_0_grad, 0.0), 0.0),
        (
            "powi(0) at 3 (x⁰ = 1 is constant)",
            d1(powi_0_grad, 3.0),
            0.0,
        ),
        ("powi(1) at 0", d1(powi_1_grad, 0.0), 1.0),
        ("powi(1) at -0", d1(powi_1_grad, -0.0), 1.0),
        ("powi(2) at 0", d1(powi_2_grad, 0.0), 0.0),
        ("powi(2) at 3", d1(powi_2_grad, 3.0), 6.0),
        (
            "powi(-1) at 0 (−1/x²: −inf)",
            d1(powi_minus_1_grad, 0.0),
            f64::NEG_INFINITY,
        ),
        ("powi(-1) at 2", d1(powi_minus_1_grad, 2.0), -0.25),
        // n·x^(n−1) where n − 1 does not fit in an i32.
        ("powi(i32::MIN) at 1", d1(powi_min_grad, 1.0), -2147483648.0),
        (
            "powi(i32::MIN) at -1",
            d1(powi_min_grad, -1.0),
            2147483648.0,
        ),
    ]);
}

#[test]
fn real_powers_at_zero() {
    let dx = |x, y| powf_of_grad(x, y).1 .0;
    let dy = |x, y| powf_of_grad(x, y).1 .1;
    check(&[
        ("powf(0, 0) d/dx (convention: 0)", dx(0.0, 0.0), 0.0),
        ("powf(3, 0) d/dx (x⁰ = 1 is constant)", dx(3.0, 0.0), 0.0),
        ("powf(0, 1) d/dx", dx(0.0, 1.0), 1.0),
        ("powf(0, 2) d/dx", dx(0.0, 2.0), 0.0),
        (
            "powf(0, 0.5) d/dx (as sqrt: +inf)",
            dx(0.0, 0.5),
            f64::INFINITY,
        ),
        ("powf(4, 0.5) d/dx", dx(4.0, 0.5), 0.25),
        ("powf(0, 2) d/dexponent (convention: 0)", dy(0.0, 2.0), 0.0),
        (
            "powf(0, 0.5) d/dexponent (convention: 0)",
            dy(0.0, 0.5),
            0.0,
        ),
        ("powf(0, 1) d/dexponent (convention: 0)", dy(0.0, 1.0), 0.0),
        ("powf(0, 0) d/dexponent (convention: 0)", dy(0.0, 0.0), 0.0),
        (
            "powf(0, -1) d/dexponent (convention: 0)",
            dy(0.0, -1.0),
            0.0,
        ),
        (
            "powf(-0, 2) d/dexponent (convention: 0)",
            dy(-0.0, 2.0),
            0.0,
        ),
        (
            "powf(2, 3) d/dexponent (x^y ln x)",
            dy(2.0, 3.0),
            8.0 * std::f64::consts::LN_2,
        ),
    ]);
}

// ---------------------------------------------------------------------------------------------
// atan2 and hypot at the origin and on the axes

#[reverse_diff]
fn atan2_of(y: f64, x: f64) -> f64 {
    y.atan2(x)
}

#[reverse_diff]
fn hypot_of(x: f64, y: f64) -> f64 {
    x.hypot(y)
}

#[test]
fn atan2_at_origin_and_on_axes() {
    // ∂/∂y atan2(y, x) = x / (x² + y²), ∂/∂x = −y / (x² + y²).
    let d = |y, x| atan2_of_grad(y, x).1;
    check(&[
        ("atan2 at origin d/dy (convention: 0)", d(0.0, 0.0).0, 0.0),
        ("atan2 at origin d/dx (convention: 0)", d(0.0, 0.0).1, 0.0),
        (
            "atan2 at (-0, -0) d/dy (convention: 0)",
            d(-0.0, -0.0).0,
            0.0,
        ),
        (
            "atan2 at (-0, -0) d/dx (convention: 0)",
            d(-0.0, -0.0).1,
            0.0,
        ),
        ("atan2 on +x axis d/dy", d(0.0, 2.0).0, 0.5),
        ("atan2 on +x axis d/dx", d(0.0, 2.0).1, 0.0),
        ("atan2 on -x axis d/dy", d(0.0, -2.0).0, -0.5),
        ("atan2 on -x axis d/dx", d(0.0, -2.0).1, 0.0),
        ("atan2 on +y axis d/dy", d(2.0, 0.0).0, 0.0),
        ("atan2 on +y axis d/dx", d(2.0, 0.0).1, -0.5),
        ("atan2 on -y axis d/dy", d(-2.0, 0.0).0, 0.0),
        ("atan2 on -y axis d/dx", d(-2.0, 0.0).1, 0.5),
        // Near the origin, but not at it: x² + y² underflows to 0 in f64, the partials do not.
        (
            "atan2 at (1e-170, 1e-170) d/dy",
            d(1e-170, 1e-170).0,
            0.5e170,
        ),
        (
            "atan2 at (1e-170, 1e-170) d/dx",
            d(1e-170, 1e-170).1,
            -0.5e170,
        ),
        // Far out: x² + y² overflows to ∞ in f64, the partials do not.
        ("atan2 at (1e200, 1e200) d/dy", d(1e200, 1e200).0, 0.5e-200),
        ("atan2 at (1e200, 1e200) d/dx", d(1e200, 1e200).1, -0.5e-200),
    ]);
}

#[test]
fn hypot_at_origin_and_on_axes() {
    // ∂/∂x hypot(x, y) = x / hypot, ∂/∂y = y / hypot.
    let d = |x, y| hypot_of_grad(x, y).1;
    check(&[
        ("hypot at origin d/dx (convention: 0)", d(0.0, 0.0).0, 0.0),
        ("hypot at origin d/dy (convention: 0)", d(0.0, 0.0).1, 0.0),
        ("hypot on +x axis d/dx", d(3.0, 0.0).0, 1.0),
        ("hypot on +x axis d/dy", d(3.0, 0.0).1, 0.0),
        ("hypot on -x axis d/dx", d(-3.0, 0.0).0, -1.0),
        ("hypot on -y axis d/dx", d(0.0, -2.0).0, 0.0),
        ("hypot on -y axis d/dy", d(0.0, -2.0).1, -1.0),
        ("hypot at (3, 4) d/dx", d(3.0, 4.0).0, 0.6),
        ("hypot at (3, 4) d/dy", d(3.0, 4.0).1, 0.8),
    ]);
}

// ---------------------------------------------------------------------------------------------
// Inverse hyperbolic functions far out, where x² overflows

#[reverse_diff]
fn asinh_of(x: f64) -> f64 {
    x.asinh()
}

#[reverse_diff]
fn acosh_of(x: f64) -> f64 {
    x.acosh()
}

#[test]
fn inverse_hyperbolic_partials_where_the_square_overflows() {
    // asinh′ x = 1/√(x² + 1), acosh′ x = 1/√(x² − 1): both ≈ 1/|x| for large |x|.
    check(&[
        ("asinh at 1e200", d1(asinh_of_grad, 1e200), 1e-200),
        ("asinh at -1e200", d1(asinh_of_grad, -1e200), 1e-200),
        ("asinh at 0", d1(asinh_of_grad, 0.0), 1.0),
        ("acosh at 1e200", d1(acosh_of_grad, 1e200), 1e-200),
        (
            "acosh at 1 (1/√0: +inf)",
            d1(acosh_of_grad, 1.0),
            f64::INFINITY,
        ),
        ("acosh at 2", d1(acosh_of_grad, 2.0), 1.0 / 3f64.sqrt()),
    ]);
}

// ---------------------------------------------------------------------------------------------
// Division by zero, and a zero adjoint against an infinite partial

#[reverse_diff]
fn quotient(x: f64, y: f64) -> f64 {
    x / y
}

#[reverse_diff]
fn reciprocal(x: f64) -> f64 {
    x.recip()
}

#[reverse_diff]
fn one_over(x: f64) -> f64 {
    1.0 / x
}

/// `√x` enters the result only through a product with 0: the infinite partial of `sqrt` at 0
/// meets a zero adjoint.
#[reverse_diff]
fn masked_sqrt(x: f64) -> f64 {
    x.sqrt() * 0.0 + x
}

#[test]
fn division_by_zero() {
    let inf = f64::INFINITY;
    let d = |x, y| quotient_grad(x, y).1;
    check(&[
        // ∂/∂x (x/y) = 1/y, ∂/∂y = −x/y².
        ("1 / 0 d/dx (1/y: +inf)", d(1.0, 0.0).0, inf),
        ("1 / 0 d/dy (−x/y²: −inf)", d(1.0, 0.0).1, -inf),
        ("-1 / 0 d/dx (1/y: +inf)", d(-1.0, 0.0).0, inf),
        ("-1 / 0 d/dy (−x/y²: +inf)", d(-1.0, 0.0).1, inf),
        ("1 / -0 d/dx (1/y: −inf)", d(1.0, -0.0).0, -inf),
        ("6 / 3 d/dx", d(6.0, 3.0).0, 1.0 / 3.0),
        ("6 / 3 d/dy", d(6.0, 3.0).1, -6.0 / 9.0),
        ("recip at 0 (−1/x²: −inf)", d1(reciprocal_grad, 0.0), -inf),
        ("recip at -0 (−1/x²: −inf)", d1(reciprocal_grad, -0.0), -inf),
        ("1.0 / x at 0 (−1/x²: −inf)", d1(one_over_grad, 0.0), -inf),
        ("1.0 / x at 2", d1(one_over_grad, 2.0), -0.25),
    ]);
}

#[test]
fn zero_adjoint_is_not_poisoned_by_an_infinite_partial() {
    // Convention: a node whose adjoint is 0 passes nothing back, so 0 · inf contributes 0,
    // not NaN. d/dx (0·√x + x) = 1.
    check(&[("0·sqrt(x) + x at 0", d1(masked_sqrt_grad, 0.0), 1.0)]);
}

// ---------------------------------------------------------------------------------------------
// NaN and ±∞ inputs to every primitive

/// The value of `f` at `x` and its derivative there, through the tape.
fn value_and_derivative(x: f64, f: fn(Var) -> Var) -> (f64, f64) {
    let tape = Tape::new();
    let input = tape.var(x);
    let output = f(input);
    tape.backward(output);
    (output.value(), tape.adjoint(input))
}

/// The value of `f` at `x` and its derivative there, in forward mode (as `f_grad` computes the
/// gradient of a function of a few scalars).
fn forward_value_and_derivative(x: f64, f: fn(Forward) -> Forward) -> (f64, f64) {
    let output = f(Dual::new(x, Lanes([1.0])));
    (output.value, output.tangent.0[0])
}

/// The scalar of forward mode with one lane.
type Forward = Dual<f64, Lanes<1>>;

/// A primitive applied to its operand `x` (a constant fills any other operand).
type Primitive<S> = (&'static str, fn(S) -> S);

/// Every primitive of `Real` as a function of one operand, the others constant.
fn primitives<S: Real>() -> [Primitive<S>; 50] {
    [
        ("-x", |x| -x),
        ("x + 1", |x| x + 1.0),
        ("1 - x", |x| S::from_f64(1.0) - x),
        ("x * 2", |x| x * 2.0),
        ("x / 2", |x| x / 2.0),
        ("2 / x", |x| S::from_f64(2.0) / x),
        ("x % 2", |x| x % 2.0),
        ("2 % x", |x| S::from_f64(2.0) % x),
        ("abs", |x| x.abs()),
        ("signum", |x| x.signum()),
        ("sqrt", |x| x.sqrt()),
        ("cbrt", |x| x.cbrt()),
        ("exp", |x| x.exp()),
        ("exp2", |x| x.exp2()),
        ("exp_m1", |x| x.exp_m1()),
        ("ln", |x| x.ln()),
        ("log2", |x| x.log2()),
        ("log10", |x| x.log10()),
        ("ln_1p", |x| x.ln_1p()),
        ("log(2)", |x| x.log(S::from_f64(2.0))),
        ("powi(0)", |x| x.powi(0)),
        ("powi(2)", |x| x.powi(2)),
        ("powi(-1)", |x| x.powi(-1)),
        ("powf(0.5)", |x| x.powf(S::from_f64(0.5))),
        ("2.powf(x)", |x| S::from_f64(2.0).powf(x)),
        ("sin", |x| x.sin()),
        ("cos", |x| x.cos()),
        ("tan", |x| x.tan()),
        ("sin_cos().0", |x| x.sin_cos().0),
        ("asin", |x| x.asin()),
        ("acos", |x| x.acos()),
        ("atan", |x| x.atan()),
        ("atan2(x, 1)", |x| x.atan2(S::from_f64(1.0))),
        ("atan2(1, x)", |x| S::from_f64(1.0).atan2(x)),
        ("sinh", |x| x.sinh()),
        ("cosh", |x| x.cosh()),
        ("tanh", |x| x.tanh()),
        ("asinh", |x| x.asinh()),
        ("acosh", |x| x.acosh()),
        ("atanh", |x| x.atanh()),
        ("recip", |x| x.recip()),
        ("max(1)", |x| x.max(S::from_f64(1.0))),
        ("min(1)", |x| x.min(S::from_f64(1.0))),
        ("mul_add(2, 1)", |x| {
            x.mul_add(S::from_f64(2.0), S::from_f64(1.0))
        }),
        ("floor", |x| x.floor()),
        ("round", |x| x.round()),
        ("fract", |x| x.fract()),
        ("to_degrees", |x| x.to_degrees()),
        ("hypot(1)", |x| x.hypot(S::from_f64(1.0))),
        ("clamp(0, 1)", |x| {
            x.clamp(S::from_f64(0.0), S::from_f64(1.0))
        }),
    ]
}

/// Checks the value and derivative of every listed primitive at `x` against the table's
/// `(name, value, derivative)`, through the tape and in forward mode; every primitive must have
/// a row.
#[track_caller]
fn check_at(x: f64, table: &[(&str, f64, f64)]) {
    let mut rows = Vec::new();
    let (on_tape, forward) = (primitives::<Var>(), primitives::<Forward>());
    for (name, want_value, want_derivative) in table {
        let position = on_tape
            .iter()
            .position(|(primitive, _)| primitive == name)
            .unwrap_or_else(|| panic!("no primitive {name}"));
        let results = [
            ("tape", value_and_derivative(x, on_tape[position].1)),
            (
                "forward",
                forward_value_and_derivative(x, forward[position].1),
            ),
        ];
        for (mode, (value, derivative)) in results {
            rows.push((
                format!("{name} at {x:?} ({mode}): value"),
                value,
                *want_value,
            ));
            rows.push((
                format!("{name} at {x:?} ({mode}): derivative"),
                derivative,
                *want_derivative,
            ));
        }
    }
    let missing: Vec<&str> = on_tape
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !table.iter().any(|(row, ..)| row == name))
        .collect();
    assert!(missing.is_empty(), "no row at {x:?} for {missing:?}");
    check(&rows);
}

#[test]
fn nan_input() {
    // A NaN operand gives a NaN value and a NaN derivative, except where the partial does not
    // depend on the operand (linear primitives: the constant slope; piecewise-constant ones: 0;
    // `fract`: 1; `clamp` passes the NaN operand through: 1), and where f64 ignores the NaN
    // (`max`, `min`: the other operand, slope 0; `powi(0)`: 1, slope 0).
    let nan = f64::NAN;
    check_at(
        nan,
        &[
            ("-x", nan, -1.0),
            ("x + 1", nan, 1.0),
            ("1 - x", nan, -1.0),
            ("x * 2", nan, 2.0),
            ("x / 2", nan, 0.5),
            ("2 / x", nan, nan),
            ("x % 2", nan, 1.0),
            ("2 % x", nan, nan),
            ("abs", nan, nan),
            ("signum", nan, 0.0),
            ("sqrt", nan, nan),
            ("cbrt", nan, nan),
            ("exp", nan, nan),
            ("exp2", nan, nan),
            ("exp_m1", nan, nan),
            ("ln", nan, nan),
            ("log2", nan, nan),
            ("log10", nan, nan),
            ("ln_1p", nan, nan),
            ("log(2)", nan, nan),
            ("powi(0)", 1.0, 0.0),
            ("powi(2)", nan, nan),
            ("powi(-1)", nan, nan),
            ("powf(0.5)", nan, nan),
            ("2.powf(x)", nan, nan),
            ("sin", nan, nan),
            ("cos", nan, nan),
            ("tan", nan, nan),
            ("sin_cos().0", nan, nan),
            ("asin", nan, nan),
            ("acos", nan, nan),
            ("atan", nan, nan),
            ("atan2(x, 1)", nan, nan),
            ("atan2(1, x)", nan, nan),
            ("sinh", nan, nan),
            ("cosh", nan, nan),
            ("tanh", nan, nan),
            ("asinh", nan, nan),
            ("acosh", nan, nan),
            ("atanh", nan, nan),
            ("recip", nan, nan),
            ("max(1)", 1.0, 0.0),
            ("min(1)", 1.0, 0.0),
            ("mul_add(2, 1)", nan, 2.0),
            ("floor", nan, 0.0),
            ("round", nan, 0.0),
            ("fract", nan, 1.0),
            ("to_degrees", nan, 180.0 / std::f64::consts::PI),
            ("hypot(1)", nan, nan),
            // f64's clamp returns the NaN operand itself: the slope of the identity.
            ("clamp(0, 1)", nan, 1.0),
        ],
    );
}

#[test]
fn positive_infinity_input() {
    // The value is f64's; the derivative is the limit of the derivative as x → +∞ (e.g.
    // d/dx √x = 1/(2√x) → 0, d/dx tanh x = 1 − tanh² x → 0), NaN where there is no limit
    // (sin, cos, tan) or the value is NaN, and the constant slope of linear primitives.
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let half_pi = std::f64::consts::FRAC_PI_2;
    check_at(
        inf,
        &[
            ("-x", -inf, -1.0),
            ("x + 1", inf, 1.0),
            ("1 - x", -inf, -1.0),
            ("x * 2", inf, 2.0),
            ("x / 2", inf, 0.5),
            ("2 / x", 0.0, 0.0),
            ("x % 2", nan, 1.0),
            ("2 % x", 2.0, 0.0),
            ("abs", inf, 1.0),
            ("signum", 1.0, 0.0),
            ("sqrt", inf, 0.0),
            ("cbrt", inf, 0.0),
            ("exp", inf, inf),
            ("exp2", inf, inf),
            ("exp_m1", inf, inf),
            ("ln", inf, 0.0),
            ("log2", inf, 0.0),
            ("log10", inf, 0.0),
            ("ln_1p", inf, 0.0),
            ("log(2)", inf, 0.0),
            ("powi(0)", 1.0, 0.0),
            ("powi(2)", inf, inf),
            ("powi(-1)", 0.0, 0.0),
            ("powf(0.5)", inf, 0.0),
            ("2.powf(x)", inf, inf),
            ("sin", nan, nan),
            ("cos", nan, nan),
            ("tan", nan, nan),
            ("sin_cos().0", nan, nan),
            ("asin", nan, nan),
            ("acos", nan, nan),
            ("atan", half_pi, 0.0),
            ("atan2(x, 1)", half_pi, 0.0),
            ("atan2(1, x)", 0.0, 0.0),
            ("sinh", inf, inf),
            ("cosh", inf, inf),
            ("tanh", 1.0, 0.0),
            ("asinh", inf, 0.0),
            ("acosh", inf, 0.0),
            // Outside the domain: the NaN value signals it; the slope is 1/(1 − x²) → −0.
            ("atanh", nan, 0.0),
            ("recip", 0.0, 0.0),
            ("max(1)", inf, 1.0),
            ("min(1)", 1.0, 0.0),
            ("mul_add(2, 1)", inf, 2.0),
            ("floor", inf, 0.0),
            ("round", inf, 0.0),
            ("fract", nan, 1.0),
            ("to_degrees", inf, 180.0 / std::f64::consts::PI),
            // hypot(x, 1) = |x|·√(1 + 1/x²): the derivative tends to +1.
            ("hypot(1)", inf, 1.0),
            ("clamp(0, 1)", 1.0, 0.0),
        ],
    );
}

#[test]
fn negative_infinity_input() {
    // As for +∞, with the limits as x → −∞ (d/dx cosh x = sinh x → −∞, d/dx x² = 2x → −∞).
    // Outside the domain (sqrt, logarithms, acosh, atanh), the value is NaN and the slope is the
    // formula's (1/x → −0 for the logarithms).
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let half_pi = std::f64::consts::FRAC_PI_2;
    check_at(
        -inf,
        &[
            ("-x", inf, -1.0),
            ("x + 1", -inf, 1.0),
            ("1 - x", inf, -1.0),
            ("x * 2", -inf, 2.0),
            ("x / 2", -inf, 0.5),
            ("2 / x", -0.0, 0.0),
            ("x % 2", nan, 1.0),
            ("2 % x", 2.0, 0.0),
            ("abs", inf, -1.0),
            ("signum", -1.0, 0.0),
            ("sqrt", nan, nan),
            ("cbrt", -inf, 0.0),
            ("exp", 0.0, 0.0),
            ("exp2", 0.0, 0.0),
            ("exp_m1", -1.0, 0.0),
            ("ln", nan, 0.0),
            ("log2", nan, 0.0),
            ("log10", nan, 0.0),
            ("ln_1p", nan, 0.0),
            ("log(2)", nan, 0.0),
            ("powi(0)", 1.0, 0.0),
            ("powi(2)", inf, -inf),
            ("powi(-1)", -0.0, 0.0),
            ("powf(0.5)", inf, 0.0),
            ("2.powf(x)", 0.0, 0.0),
            ("sin", nan, nan),
            ("cos", nan, nan),
            ("tan", nan, nan),
            ("sin_cos().0", nan, nan),
            ("asin", nan, nan),
            ("acos", nan, nan),
            ("atan", -half_pi, 0.0),
            ("atan2(x, 1)", -half_pi, 0.0),
            ("atan2(1, x)", std::f64::consts::PI, 0.0),
            ("sinh", -inf, inf),
            ("cosh", inf, -inf),
            ("tanh", -1.0, 0.0),
            ("asinh", -inf, 0.0),
            ("acosh", nan, nan),
            ("atanh", nan, 0.0),
            ("recip", -0.0, 0.0),
            ("max(1)", 1.0, 0.0),
            ("min(1)", -inf, 1.0),
            ("mul_add(2, 1)", -inf, 2.0),
            ("floor", -inf, 0.0),
            ("round", -inf, 0.0),
            ("fract", nan, 1.0),
            ("to_degrees", -inf, 180.0 / std::f64::consts::PI),
            // The derivative of hypot(x, 1) tends to −1 as x → −∞.
            ("hypot(1)", inf, -1.0),
            ("clamp(0, 1)", 0.0, 0.0),
        ],
    );
}

#[reverse_diff]
fn remainder(a: f64, b: f64) -> f64 {
    a % b
}

/// `a % b = a − q·b` with `q` the quotient `%` actually used: `1.0 % 0.1` is
/// 0.09999999999999995 = 1 − 9·0.1 (in floating point), so ∂/∂b = −9 even though `1.0 / 0.1`
/// rounds to 10.
#[test]
fn remainder_uses_the_quotient_of_the_remainder() {
    let (value, (da, db)) = remainder_grad(1.0, 0.1);
    assert_eq!(value, 1.0f64 % 0.1);
    assert_eq!((da, db), (1.0, -9.0));
    // And where a / b is not near an integer: 7.5 % 2 = 1.5 = 7.5 − 3·2.
    assert_eq!(remainder_grad(7.5, 2.0).1, (1.0, -3.0));
    // Forward mode agrees.
    assert_eq!(remainder_jvp(1.0, 0.1, 0.0, 1.0).1, -9.0);
}

// ---------------------------------------------------------------------------------------------
// Both modes: the tables above call `_grad`, which for these functions of one to three scalars
// runs in forward mode; the tape must give the same derivative at every point of the tables.

/// The points the tables use, and the special values around them.
const POINTS: [f64; 16] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    2.0,
    -2.0,
    0.5,
    2.5,
    0.1,
    1e-15,
    1e-170,
    1e200,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MIN_POSITIVE,
];

/// Rows `(function at point, derivative in forward mode, derivative on the tape)` for each
/// one-scalar function and point.
macro_rules! one_scalar_rows {
    ($rows:ident; $($f:ident $grad:ident $vjp:ident),* $(,)?) => {$(
        for x in POINTS {
            let name = format!("{} at {x:?}", stringify!($f));
            $rows.push((name, $grad(x).1, $vjp(x, &1.0).1));
        }
    )*};
}

/// Rows for each two-scalar function over every pair of points, one per partial.
macro_rules! two_scalar_rows {
    ($rows:ident; $($f:ident $grad:ident $vjp:ident),* $(,)?) => {$(
        for x in POINTS {
            for y in POINTS {
                let name = format!("{} at ({x:?}, {y:?})", stringify!($f));
                let (forward, tape) = ($grad(x, y).1, $vjp(x, y, &1.0).1);
                $rows.push((format!("{name} d/dx"), forward.0, tape.0));
                $rows.push((format!("{name} d/dy"), forward.1, tape.1));
            }
        }
    )*};
}

/// Whether forward mode and the tape agree: as [`matches`], or both NaN.
#[test]
fn forward_mode_and_the_tape_agree_at_every_edge_point() {
    let mut rows: Vec<(String, f64, f64)> = Vec::new();
    one_scalar_rows!(rows;
        abs_of abs_of_grad abs_of_vjp,
        max_with_nan_constant max_with_nan_constant_grad max_with_nan_constant_vjp,
        min_with_nan_constant min_with_nan_constant_grad min_with_nan_constant_vjp,
        floor_of floor_of_grad floor_of_vjp,
        ceil_of ceil_of_grad ceil_of_vjp,
        round_of round_of_grad round_of_vjp,
        trunc_of trunc_of_grad trunc_of_vjp,
        signum_of signum_of_grad signum_of_vjp,
        fract_of fract_of_grad fract_of_vjp,
        sqrt_of sqrt_of_grad sqrt_of_vjp,
        cbrt_of cbrt_of_grad cbrt_of_vjp,
        ln_of ln_of_grad ln_of_vjp,
        log2_of log2_of_grad log2_of_vjp,
        log10_of log10_of_grad log10_of_vjp,
        ln_1p_of ln_1p_of_grad ln_1p_of_vjp,
        powi_0 powi_0_grad powi_0_vjp,
        powi_1 powi_1_grad powi_1_vjp,
        powi_2 powi_2_grad powi_2_vjp,
        powi_minus_1 powi_minus_1_grad powi_minus_1_vjp,
        powi_min powi_min_grad powi_min_vjp,
        asinh_of asinh_of_grad asinh_of_vjp,
        acosh_of acosh_of_grad acosh_of_vjp,
        reciprocal reciprocal_grad reciprocal_vjp,
        one_over one_over_grad one_over_vjp,
        masked_sqrt masked_sqrt_grad masked_sqrt_vjp,
    );
    two_scalar_rows!(rows;
        copysign_of copysign_of_grad copysign_of_vjp,
        max_of max_of_grad max_of_vjp,
        min_of min_of_grad min_of_vjp,
        powf_of powf_of_grad powf_of_vjp,
        atan2_of atan2_of_grad atan2_of_vjp,
        hypot_of hypot_of_grad hypot_of_vjp,
        quotient quotient_grad quotient_vjp,
        remainder remainder_grad remainder_vjp,
    );
    for low in POINTS {
        for high in POINTS.into_iter().filter(|&high| low <= high) {
            for x in POINTS {
                let name = format!("clamp_of({x:?}, {low:?}, {high:?})");
                let (forward, tape) = (
                    clamp_of_grad(x, low, high).1,
                    clamp_of_vjp(x, low, high, &1.0).1,
                );
                rows.push((format!("{name} d/dx"), forward.0, tape.0));
                rows.push((format!("{name} d/dlow"), forward.1, tape.1));
                rows.push((format!("{name} d/dhigh"), forward.2, tape.2));
            }
        }
    }
    check(&rows);
}

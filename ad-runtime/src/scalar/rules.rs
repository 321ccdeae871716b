//! The derivative rules of the arithmetic operators and the one-operand methods, as plain `f64`
//! functions: each returns the value and the partial derivative with respect to each operand.
//!
//! Written once, used twice: by [`Var`](crate::Var)'s operations (one record per operation) and
//! by the fused records `#[reverse_diff]` generates for whole expressions (one record per
//! expression), so both follow the same conventions at non-differentiable points
//! (see `primitives.rs`).

use crate::scalar::var::float::{rem_quotient, sign_or_zero};
use std::f64::consts::{LN_10, LN_2, PI};

/// `a + b`.
#[inline(always)]
pub fn add(a: f64, b: f64) -> (f64, f64, f64) {
    (a + b, 1.0, 1.0)
}

/// `a - b`.
#[inline(always)]
pub fn sub(a: f64, b: f64) -> (f64, f64, f64) {
    (a - b, 1.0, -1.0)
}

/// `a * b`.
#[inline(always)]
pub fn mul(a: f64, b: f64) -> (f64, f64, f64) {
    (a * b, b, a)
}

/// `a / b`.
#[inline(always)]
pub fn div(a: f64, b: f64) -> (f64, f64, f64) {
    let value = a / b;
    (value, 1.0 / b, -value / b)
}

/// `a % b`: `a - q·b` with `q` the quotient `%` used.
#[inline(always)]
pub fn rem(a: f64, b: f64) -> (f64, f64, f64) {
    (a % b, 1.0, -rem_quotient(a, b))
}

/// `-x`.
#[inline(always)]
pub fn neg(x: f64) -> (f64, f64) {
    (-x, -1.0)
}

/// `x.powi(n)`; the partial is 0 for `n = 0`.
#[inline(always)]
pub fn powi(x: f64, n: i32) -> (f64, f64) {
    let partial = match n {
        0 => 0.0,
        // n - 1 does not fit in an i32: x^(n-1) = x^n / x.
        i32::MIN => f64::from(n) * (x.powi(n) / x),
        _ => f64::from(n) * x.powi(n - 1),
    };
    (x.powi(n), partial)
}

/// Defines `name(x) -> (value, partial)` from the value and the partial (`v` is the value).
macro_rules! unary_rules {
    ($($name:ident: |$x:ident, $v:ident| $value:expr, $partial:expr;)*) => {$(
        #[doc = concat!("`x.", stringify!($name), "()`.")]
        #[inline(always)]
        pub fn $name($x: f64) -> (f64, f64) {
            let $v = $value;
            ($v, $partial)
        }
    )*};
}

unary_rules! {
    abs:        |x, v| x.abs(),            sign_or_zero(x);
    sqrt:       |x, v| x.sqrt(),           0.5 / v.abs(); // +∞ at -0 too, not -∞
    cbrt:       |x, v| x.cbrt(),           1.0 / (3.0 * v * v);
    exp:        |x, v| x.exp(),            v;
    exp2:       |x, v| x.exp2(),           v * LN_2;
    exp_m1:     |x, v| x.exp_m1(),         v + 1.0;
    ln:         |x, v| x.ln(),             1.0 / x;
    log2:       |x, v| x.log2(),           1.0 / (x * LN_2);
    log10:      |x, v| x.log10(),          1.0 / (x * LN_10);
    ln_1p:      |x, v| x.ln_1p(),          1.0 / (1.0 + x);
    sin:        |x, v| x.sin(),            x.cos();
    cos:        |x, v| x.cos(),            -x.sin();
    tan:        |x, v| x.tan(),            1.0 + v * v;
    asin:       |x, v| x.asin(),           1.0 / (1.0 - x * x).sqrt();
    acos:       |x, v| x.acos(),           -1.0 / (1.0 - x * x).sqrt();
    atan:       |x, v| x.atan(),           1.0 / (1.0 + x * x);
    sinh:       |x, v| x.sinh(),           x.cosh();
    cosh:       |x, v| x.cosh(),           x.sinh();
    tanh:       |x, v| x.tanh(),           1.0 - v * v;
    asinh:      |x, v| x.asinh(),          1.0 / x.hypot(1.0); // 1/√(x² + 1), no overflow
    acosh:      |x, v| x.acosh(),          1.0 / ((x - 1.0).sqrt() * (x + 1.0).sqrt());
    atanh:      |x, v| x.atanh(),          1.0 / (1.0 - x * x);
    recip:      |x, v| x.recip(),          -v * v;
    fract:      |x, v| x.fract(),          1.0;
    to_degrees: |x, v| x.to_degrees(),     180.0 / PI;
    to_radians: |x, v| x.to_radians(),     PI / 180.0;
}

/// The adjoint `adjoint` passes back through a partial `partial`: nothing when the adjoint is
/// 0, so an infinite or NaN partial behind a value that does not reach the output contributes
/// 0, as in the tape's backward sweep.
#[inline(always)]
pub fn pass(adjoint: f64, partial: f64) -> f64 {
    if adjoint != 0.0 {
        adjoint * partial
    } else {
        0.0
    }
}

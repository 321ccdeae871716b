//! Visibilities, doc comments and other attributes on annotated functions: kept on the
//! function, and on the companion where they make sense there (`#[cfg]`, lint levels,
//! `#[must_use]`; not `#[inline]` or the function's docs, the companion has its own).
//!
//! The file denies every warning, so an attribute dropped from the function (an `#[allow]`)
//! or wrongly copied to the companion fails the build. Expected values are analytic.
#![deny(warnings)]

use ad::reverse_diff;
use approx::assert_relative_eq;

mod geometry {
    use ad::reverse_diff;

    /// The area of a rectangle: visible in the crate, and so is `area_grad`.
    #[reverse_diff]
    pub(crate) fn area(w: f64, h: f64) -> f64 {
        w * h
    }

    pub mod solids {
        use ad::reverse_diff;

        /// The volume of a box: visible to the parent module only, and so is `volume_grad`.
        #[reverse_diff]
        pub(super) fn volume(w: f64, h: f64, d: f64) -> f64 {
            super::area(w, h) * d
        }

        /// Visible in `geometry` only.
        #[reverse_diff]
        pub(in crate::geometry) fn cube(side: f64) -> f64 {
            side * side * side
        }
    }

    /// Private helpers of the module, used through `pub` wrappers.
    #[reverse_diff]
    fn half(x: f64) -> f64 {
        x / 2.0
    }

    /// The results of `volume_grad` and `cube_grad`.
    pub type VolumeAndCube = ((f64, (f64, f64, f64)), (f64, f64));

    /// Re-exports the restricted companions' results to the tests.
    pub fn volume_and_cube_grads(w: f64, h: f64, d: f64) -> VolumeAndCube {
        (solids::volume_grad(w, h, d), solids::cube_grad(w))
    }

    pub fn half_grad_public(x: f64) -> (f64, f64) {
        half_grad(x)
    }
}

/// `#[inline]` written before the attribute.
#[inline]
#[reverse_diff]
fn inlined_before(x: f64) -> f64 {
    x.exp()
}

/// `#[inline(always)]` written after it.
#[reverse_diff]
#[inline(always)]
fn inlined_after(x: f64) -> f64 {
    x.ln()
}

/// An `#[allow]` that the function needs: without it, the unused variable and the indexed
/// loop would fail this file's `#![deny(warnings)]`.
#[reverse_diff]
#[allow(unused_variables, clippy::needless_range_loop)]
fn with_allowed_lints(xs: &[f64]) -> f64 {
    let unused = xs.len();
    let mut total = 0.0;
    for i in 0..xs.len() {
        total += xs[i] * xs[i];
    }
    total
}

/// Compiled in: the companion is too.
#[reverse_diff]
#[cfg(test)]
fn configured_in(x: f64) -> f64 {
    x * 3.0
}

/// Compiled out, with its companion: the body names a function that does not exist, and
/// `configured_out_grad` would call a function that does not exist either.
#[reverse_diff]
#[cfg(not(test))]
fn configured_out(x: f64) -> f64 {
    no_such_function(x)
}

/// A `#[cfg_attr]` that adds an attribute the companion can carry.
#[reverse_diff]
#[cfg_attr(test, must_use = "the value is the point")]
fn must_use_when_configured(x: f64) -> f64 {
    x * x
}

/// A `#[must_use]` result; the companion's result is `#[must_use]` too.
#[reverse_diff]
#[must_use]
pub fn must_use(x: f64) -> f64 {
    -x
}

/// A deprecated function has a deprecated companion.
#[reverse_diff]
#[deprecated = "use `must_use` instead"]
fn deprecated(x: f64) -> f64 {
    2.0 * x
}

/// Documentation is kept on the function (and a hidden function's companion is hidden too).
#[reverse_diff]
#[doc(hidden)]
pub fn hidden(x: f64) -> f64 {
    x + 1.0
}

#[test]
fn visibilities_carry_to_companions() {
    // d(wh)/dw = h, d(wh)/dh = w.
    assert_eq!(geometry::area_grad(2.0, 3.0), (6.0, (3.0, 2.0)));
    let ((volume, gradient), (cube, dside)) = geometry::volume_and_cube_grads(2.0, 3.0, 4.0);
    // d(whd) = (hd, wd, wh); d(s³)/ds = 3s².
    assert_eq!((volume, gradient), (24.0, (12.0, 8.0, 6.0)));
    assert_eq!((cube, dside), (8.0, 12.0));
    assert_eq!(geometry::half_grad_public(3.0), (1.5, 0.5));
}

#[test]
fn inline_attributes() {
    let (value, dx) = inlined_before_grad(1.0);
    // d(eˣ)/dx = eˣ; d(ln x)/dx = 1/x.
    assert_relative_eq!(value, std::f64::consts::E, max_relative = 1e-15);
    assert_relative_eq!(dx, std::f64::consts::E, max_relative = 1e-15);
    assert_eq!(inlined_after_grad(4.0).1, 0.25);
    assert_eq!(inlined_after(1.0), 0.0);
}

#[test]
fn lint_levels_and_conditional_compilation() {
    // d(Σ x²)/dx = 2x.
    assert_eq!(
        with_allowed_lints_grad(&[1.0, -2.0]),
        (5.0, vec![2.0, -4.0])
    );
    assert_eq!(configured_in_grad(2.0), (6.0, 3.0));
}

#[test]
fn must_use_deprecated_and_hidden() {
    // d(x²)/dx = 2x, d(−x)/dx = −1, d(2x)/dx = 2, d(x + 1)/dx = 1.
    assert_eq!(must_use_when_configured_grad(3.0), (9.0, 6.0));
    assert_eq!(must_use_grad(3.0), (-3.0, -1.0));
    #[allow(deprecated)]
    let deprecated = deprecated_grad(3.0);
    assert_eq!(deprecated, (6.0, 2.0));
    assert_eq!(hidden_grad(3.0), (4.0, 1.0));
}

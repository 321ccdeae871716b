//! [`Lanes`]: `K` tangents carried side by side, so that one forward pass of a
//! `Dual<f64, Lanes<K>>` computes the derivatives along `K` directions at once. Seeded with the
//! `K` unit directions, its tangent at the result is the gradient of a function of `K` scalars:
//! `f_grad` runs this way when the differentiable parameters hold few scalars (no tape, no
//! sweep).
//!
//! Each lane follows the conventions of the backward sweep at non-differentiable points,
//! primitive by primitive: a term with a zero factor contributes 0, so an infinite or NaN partial
//! times a zero tangent (an input the lane does not move) or a zero partial times an infinite
//! tangent is 0, not NaN. A whole program can still get 0 in one mode and NaN in the other where
//! a partial is infinite: the sweep drops what flows into a zero adjoint, forward mode what flows
//! out of a zero tangent (the README's "Correctness" section has examples).

use crate::Tangent;
use std::ops::{Add, Div, Mul, Neg};

/// `K` tangents of one value, one per direction (the tangent type of a [`Dual`] that computes
/// a gradient in forward mode).
///
/// ```
/// use ad_runtime::{Dual, Lanes, Real};
///
/// // ∇(x·y + sin x) at (1.5, 2) in one pass: x moves lane 0, y lane 1.
/// let x = Dual::new(1.5, Lanes([1.0, 0.0]));
/// let y = Dual::new(2.0, Lanes([0.0, 1.0]));
/// let z = x * y + x.sin();
/// assert_eq!(z.tangent.0, [2.0 + 1.5f64.cos(), 1.5]);
/// ```
///
/// [`Dual`]: crate::Dual
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lanes<const K: usize>(pub [f64; K]);

impl<const K: usize> Lanes<K> {
    /// The unit direction along `lane`: 1 there, 0 elsewhere.
    #[inline]
    pub fn unit(lane: usize) -> Lanes<K> {
        Lanes(std::array::from_fn(|i| if i == lane { 1.0 } else { 0.0 }))
    }

    /// Each lane through `f`.
    #[inline(always)]
    fn map(self, f: impl Fn(f64) -> f64) -> Lanes<K> {
        // `from_fn`, not `[f64; K]::map`, which rustc often leaves out of line (its
        // `try_map`): ht's Jacobian took 17 % fewer instructions, BA's 4 % more
        // (BENCHMARKS.md, "BA's Jacobian, 2026-11-26 afternoon").
        Lanes(std::array::from_fn(|i| f(self.0[i])))
    }
}

impl<const K: usize> Default for Lanes<K> {
    #[inline(always)]
    fn default() -> Lanes<K> {
        Lanes([0.0; K])
    }
}

impl<const K: usize> Add for Lanes<K> {
    type Output = Lanes<K>;

    #[inline(always)]
    fn add(self, other: Lanes<K>) -> Lanes<K> {
        Lanes(std::array::from_fn(|i| self.0[i] + other.0[i]))
    }
}

impl<const K: usize> Neg for Lanes<K> {
    type Output = Lanes<K>;

    #[inline(always)]
    fn neg(self) -> Lanes<K> {
        self.map(|lane| -lane)
    }
}

/// A tangent times a partial. A finite nonzero partial scales every lane (a zero lane stays
/// zero); otherwise a zero lane or a zero partial gives 0.
impl<const K: usize> Mul<f64> for Lanes<K> {
    type Output = Lanes<K>;

    #[inline(always)]
    fn mul(self, partial: f64) -> Lanes<K> {
        if partial != 0.0 && partial.is_finite() {
            self.map(|lane| lane * partial)
        } else if partial == 0.0 {
            Lanes::default()
        } else {
            self.map(|lane| if lane == 0.0 { 0.0 } else { lane * partial })
        }
    }
}

/// A tangent divided by a partial's denominator: a zero lane stays 0 even when the divisor is
/// 0, infinite or NaN.
impl<const K: usize> Div<f64> for Lanes<K> {
    type Output = Lanes<K>;

    #[inline(always)]
    fn div(self, divisor: f64) -> Lanes<K> {
        if divisor != 0.0 && divisor.is_finite() {
            self.map(|lane| lane / divisor)
        } else {
            self.map(|lane| if lane == 0.0 { 0.0 } else { lane / divisor })
        }
    }
}

impl<const K: usize> Tangent<f64> for Lanes<K> {
    #[inline(always)]
    fn zero_tangent() -> Lanes<K> {
        Lanes::default()
    }

    /// Never skipped as a whole: each lane skips its own zero in [`Mul`] and [`Div`], which costs
    /// less than testing every lane first.
    #[inline(always)]
    fn is_zero_tangent(self) -> bool {
        false
    }

    #[inline(always)]
    fn is_all_zero(self) -> bool {
        self.0.iter().all(|&lane| lane == 0.0)
    }

    #[inline(always)]
    fn times(self, partial: f64) -> Lanes<K> {
        self * partial
    }

    super::tangent_sums_itself!();
}

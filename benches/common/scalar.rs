//! [`Scalar`]: the arithmetic the benchmark functions use. Each bench binary implements it for
//! the number types of its peer crates, so that each function is written once
//! ([`Objective`](super::objectives::Objective)) and every peer runs the same sequence of
//! operations.

use std::ops::{Add, Mul, Sub};

/// A real number as the benchmark functions need it: `+ − ×` between two of them, the same
/// with a constant `f64`, and `tanh`, `exp`, `ln`. Every peer implements each method with
/// one operation of its own (one tape record for the reverse-mode peers); `relu` is written
/// once, from `value` and `scale`.
pub trait Scalar: Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> {
    /// `self · c` for a constant `c`.
    fn scale(self, c: f64) -> Self;
    /// `self + c` for a constant `c`.
    fn shift(self, c: f64) -> Self;
    /// `c − self` for a constant `c`.
    fn subtract_from(self, c: f64) -> Self;
    /// The hyperbolic tangent.
    fn tanh(self) -> Self;
    /// `eˣ`.
    fn exp(self) -> Self;
    /// The natural logarithm.
    fn ln(self) -> Self;
    /// The value, as a plain number (a constant for differentiation).
    fn value(self) -> f64;
    /// `max(self, 0)`: `self` where it is not negative (a tie taking `self`'s derivative, as
    /// `ad`'s `max` does), else 0 with derivative 0.
    fn relu(self) -> Self {
        if self.value() >= 0.0 {
            self
        } else {
            self.scale(0.0)
        }
    }
}

impl Scalar for f64 {
    fn scale(self, c: f64) -> f64 {
        self * c
    }
    fn shift(self, c: f64) -> f64 {
        self + c
    }
    fn subtract_from(self, c: f64) -> f64 {
        c - self
    }
    fn tanh(self) -> f64 {
        f64::tanh(self)
    }
    fn exp(self) -> f64 {
        f64::exp(self)
    }
    fn ln(self) -> f64 {
        f64::ln(self)
    }
    fn value(self) -> f64 {
        self
    }
    fn relu(self) -> f64 {
        self.max(0.0)
    }
}

//! The `num-traits` traits that [`num_traits::Float`] requires, for [`Var`] and [`Dual`]: a
//! function written against `num_traits::Float` (or `Num`, `Zero`, `One`, `NumCast`) runs on
//! them. `Float`'s methods themselves are in `var/float.rs` and `dual/float.rs`, with their
//! partials from `rules.rs`.
//!
//! Conversions and constants carry no derivative: `T::from(2)`, `T::zero()` and `T::one()` are
//! constants, and `to_f64()` (like every `to_*`) reads the value.

use crate::real::Real;
use crate::Var;
use crate::{Dual, Tangent};
use num_traits::{Num, NumCast, One, ToPrimitive, Zero};

macro_rules! num_impls {
    ($(impl<$($param:ident: $bound:path),*> for $S:ty;)*) => {$(
        /// A constant 0.
        impl<$($param: $bound),*> Zero for $S {
            #[inline]
            fn zero() -> Self {
                Self::from_f64(0.0)
            }

            #[inline]
            fn is_zero(&self) -> bool {
                self.value() == 0.0
            }
        }

        /// A constant 1.
        impl<$($param: $bound),*> One for $S {
            #[inline]
            fn one() -> Self {
                Self::from_f64(1.0)
            }

            #[inline]
            fn is_one(&self) -> bool {
                self.value() == 1.0
            }
        }

        /// Parses a constant, as `f64` does.
        impl<$($param: $bound),*> Num for $S {
            type FromStrRadixErr = <f64 as Num>::FromStrRadixErr;

            fn from_str_radix(text: &str, radix: u32) -> Result<Self, Self::FromStrRadixErr> {
                <f64 as Num>::from_str_radix(text, radix).map(Self::from_f64)
            }
        }

        /// The value, converted as `f64` converts.
        impl<$($param: $bound),*> ToPrimitive for $S {
            #[inline]
            fn to_i64(&self) -> Option<i64> {
                self.value().to_i64()
            }

            #[inline]
            fn to_u64(&self) -> Option<u64> {
                self.value().to_u64()
            }

            #[inline]
            fn to_i128(&self) -> Option<i128> {
                self.value().to_i128()
            }

            #[inline]
            fn to_u128(&self) -> Option<u128> {
                self.value().to_u128()
            }

            #[inline]
            fn to_f32(&self) -> Option<f32> {
                self.value().to_f32()
            }

            #[inline]
            fn to_f64(&self) -> Option<f64> {
                Some(self.value())
            }
        }

        /// A constant, converted as `f64` converts.
        impl<$($param: $bound),*> NumCast for $S {
            #[inline]
            fn from<N: ToPrimitive>(number: N) -> Option<Self> {
                <f64 as NumCast>::from(number).map(Self::from_f64)
            }
        }
    )*};
}

num_impls! {
    impl<> for Var;
    impl<F: Real, T: Tangent<F>> for Dual<F, T>;
}

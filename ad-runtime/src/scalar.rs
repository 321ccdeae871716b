//! The scalar types a `#[reverse_diff]` body runs on, one module each: `f64` itself, [`Var`]
//! (reverse mode, recorded on the thread's tape) and [`Dual`] (forward mode). The derivative
//! of every primitive is written once, in `rules`, over the scalar that carries the partials;
//! each type supplies its chain rule. The macros below write the `Float` methods whose
//! derivative needs no rule, the same way for `Var` and `Dual`.
//!
//! [`Var`]: crate::Var
//! [`Dual`]: crate::Dual

use crate::Real;
use num_traits::Float;

pub(crate) mod dual;
mod f64;
mod num;
pub mod rules;
pub(crate) mod var;

/// Defines a primitive whose derivative is 0 everywhere (`floor`, `round`...): its result is
/// a constant.
macro_rules! piecewise_constant {
    ($($name:ident)*) => {$(
        #[inline]
        fn $name(self) -> Self {
            Self::from_f64(self.value().$name())
        }
    )*};
}

/// Forwards a predicate (or another function of the value alone) to the value.
macro_rules! predicate {
    ($($name:ident -> $ret:ty),* $(,)?) => {$(
        #[inline]
        fn $name(self) -> $ret {
            <f64 as Float>::$name(self.value())
        }
    )*};
}

/// `Float`'s constants (`nan()`, `epsilon()`...): `f64`'s, with no derivative.
macro_rules! float_constants {
    () => {
        $crate::scalar::float_constants!(
            nan NAN, infinity INFINITY, neg_infinity NEG_INFINITY, min_value MIN,
            min_positive_value MIN_POSITIVE, epsilon EPSILON, max_value MAX,
        );
        #[inline]
        fn neg_zero() -> Self {
            Self::from_f64(-0.0)
        }
    };
    ($($name:ident $CONST:ident),* $(,)?) => {$(
        #[inline]
        fn $name() -> Self {
            Self::from_f64(f64::$CONST)
        }
    )*};
}

/// The `Float` methods that select an operand by value or combine other primitives, with the
/// derivative of what they select or combine (conventions in `rules`).
macro_rules! selections {
    () => {
        /// The receiver on a tie; a NaN operand is ignored.
        #[inline]
        fn max(self, other: Self) -> Self {
            if $crate::scalar::rules::max_selects_first(self.value(), other.value()) {
                self
            } else {
                other
            }
        }

        /// The receiver on a tie; a NaN operand is ignored.
        #[inline]
        fn min(self, other: Self) -> Self {
            if $crate::scalar::rules::min_selects_first(self.value(), other.value()) {
                self
            } else {
                other
            }
        }

        /// The bound where the value is clamped, else `self` (a tie included). Same panics as
        /// `f64::clamp` (min > max, or a NaN bound).
        #[inline]
        fn clamp(self, min: Self, max: Self) -> Self {
            match $crate::scalar::rules::clamp_selects(self.value(), min.value(), max.value()) {
                0 => self,
                1 => min,
                _ => max,
            }
        }

        /// `self - other` where positive, else 0, as `f64`'s (deprecated) `abs_sub`.
        #[inline]
        fn abs_sub(self, other: Self) -> Self {
            if self.value() <= other.value() {
                Self::from_f64(0.0)
            } else {
                self - other
            }
        }

        #[inline]
        fn sin_cos(self) -> (Self, Self) {
            (self.sin(), self.cos())
        }
    };
}

/// The `Float` methods every scalar type writes the same way; `$unary` defines a method from a
/// row of the table of one-operand rules.
macro_rules! shared_float_methods {
    ($unary:ident) => {
        $crate::scalar::float_constants!();

        $crate::scalar::rules::with_unary_rules!($unary);

        $crate::scalar::piecewise_constant!(signum floor ceil round trunc);

        $crate::scalar::predicate! {
            is_nan -> bool, is_finite -> bool, is_infinite -> bool, is_normal -> bool,
            is_subnormal -> bool, is_sign_negative -> bool, is_sign_positive -> bool,
            classify -> FpCategory, integer_decode -> (u64, i16, i8),
        }

        $crate::scalar::selections!();
    };
}

/// The arithmetic operators of a scalar type, from its functions `add`, `sub`, `mul`, `div` and
/// `rem` over two operands (in scope where this is invoked): every combination of the type,
/// references to it, `f64` and `&f64` that `f64` itself supports, and the compound assignments.
macro_rules! operators {
    (impl<$($param:ident: $bound:path),*> for $S:ty) => {
        operators!(@traits [$($param: $bound),*] $S;
            Add add AddAssign add_assign => add;
            Sub sub SubAssign sub_assign => sub;
            Mul mul MulAssign mul_assign => mul;
            Div div DivAssign div_assign => div;
            Rem rem RemAssign rem_assign => rem;
        );
    };
    (@traits $generics:tt $S:ty;
        $($Trait:ident $method:ident $AssignTrait:ident $assign:ident => $rule:ident;)*) => {$(
        operators!(@pairs $generics $S, $Trait $method $rule;
            [$S, $S] [$S, &'a $S] [&'a $S, $S] [&'a $S, &'b $S]
            [$S, f64] [$S, &'a f64] [&'a $S, f64] [&'a $S, &'b f64]
            [f64, $S] [f64, &'a $S] [&'a f64, $S] [&'a f64, &'b $S]);
        operators!(@assign $generics $S, $AssignTrait $assign $rule; $S, &'a $S, f64, &'a f64);
    )*};
    (@pairs $generics:tt $S:ty, $Trait:ident $method:ident $rule:ident;
        [$L:ty, $R:ty] $($rest:tt)*) => {
        operators!(@binary $generics $S, $Trait $method $rule, $L, $R);
        operators!(@pairs $generics $S, $Trait $method $rule; $($rest)*);
    };
    (@pairs $generics:tt $S:ty, $Trait:ident $method:ident $rule:ident;) => {};
    (@binary [$($generics:tt)*] $S:ty, $Trait:ident $method:ident $rule:ident, $L:ty, $R:ty) => {
        impl<'a, 'b, $($generics)*> std::ops::$Trait<$R> for $L {
            type Output = $S;
            #[inline(always)]
            fn $method(self, rhs: $R) -> $S {
                $rule(self, rhs)
            }
        }
    };
    (@assign $generics:tt $S:ty, $AssignTrait:ident $assign:ident $rule:ident; $($R:ty),*) => {$(
        operators!(@compound $generics $S, $AssignTrait $assign $rule, $R);
    )*};
    (@compound [$($generics:tt)*] $S:ty, $AssignTrait:ident $assign:ident $rule:ident, $R:ty) => {
        impl<'a, $($generics)*> std::ops::$AssignTrait<$R> for $S {
            #[inline(always)]
            fn $assign(&mut self, rhs: $R) {
                *self = $rule(*self, rhs);
            }
        }
    };
}

pub(crate) use {
    float_constants, operators, piecewise_constant, predicate, selections, shared_float_methods,
};

/// The runtime's table of `f64`'s methods: every method of stable `f64` that takes `self`,
/// by the trait that gives it to the scalar (`num_traits::Float` or [`Real`]) and its shape.
/// `to_int_unchecked` is not here: its target types are named by an unstable trait, so the
/// macro reads the value and calls `f64`'s own. `ad-macro/src/names.rs` has the macro's table;
/// `tests/f64_methods.rs` checks that the two name the same methods and calls each one.
///
/// Calls `$callback!` with the table after `$args`; `$rule` are the one-operand methods of
/// the table of rules (`scalar/rules.rs`), which are not listed again here.
macro_rules! with_real_methods {
    ($callback:ident!($($args:tt)*) rules: $($rule:ident)*) => {
        $callback! {
            $($args)*
            trait Float {
                unary: $($rule)* signum floor ceil round trunc;
                binary: log(base) powf(n) atan2(other) hypot(other) max(other) min(other)
                    clamp(min, max) mul_add(a, b) copysign(sign) abs_sub(other);
                other: powi(n: i32) -> Self; sin_cos() -> (Self, Self); is_nan() -> bool;
                    is_finite() -> bool; is_infinite() -> bool; is_normal() -> bool;
                    is_subnormal() -> bool; classify() -> std::num::FpCategory;
                    is_sign_negative() -> bool; is_sign_positive() -> bool;
            }
            trait Real {
                unary: round_ties_even next_up next_down;
                binary: rem_euclid(rhs) div_euclid(rhs) midpoint(other);
                other: to_bits() -> u64; to_be_bytes() -> [u8; 8]; to_le_bytes() -> [u8; 8];
                    to_ne_bytes() -> [u8; 8];
            }
            by_reference: total_cmp;
        }
    };
}

/// Every `f64` method as an inherent method of a scalar type, forwarding to its
/// [`num_traits::Float`] or [`Real`] impl (where the derivatives are): code that holds a
/// concrete [`Var`] or [`Dual`] calls `x.sin()` with no import, and the methods taking a second
/// real accept `Self` or `f64` (`x.powf(2.5)`, `x.max(y)`), as they do on `f64`.
///
/// [`Var`]: crate::Var
/// [`Dual`]: crate::Dual
macro_rules! inherent_float_methods {
    (
        impl<$($param:ident: $bound:path),*> for $S:ty;
        $(
            trait $Trait:ident {
                unary: $($unary:ident)*;
                binary: $($binary:ident($($arg:ident),*))*;
                other: $($other:ident($($other_arg:ident: $other_ty:ty),*) -> $other_ret:ty;)*
            }
        )*
        by_reference: $($by_reference:ident)*;
    ) => {
        /// `f64`'s methods, with their derivatives (see [`num_traits::Float`] and [`Real`]).
        impl<$($param: $bound),*> $S {
            $(
                $(
                    #[doc = concat!("`f64::", stringify!($unary), "`, differentiated.")]
                    #[inline]
                    pub fn $unary(self) -> Self {
                        <Self as $Trait>::$unary(self)
                    }
                )*
                $(
                    #[doc = concat!(
                        "`f64::", stringify!($binary), "`, differentiated; the other operands ",
                        "may be `f64` constants."
                    )]
                    #[inline]
                    pub fn $binary(self, $($arg: impl Into<Self>),*) -> Self {
                        <Self as $Trait>::$binary(self, $($arg.into()),*)
                    }
                )*
                $(
                    #[doc = concat!("`f64::", stringify!($other), "`.")]
                    #[inline]
                    pub fn $other(self, $($other_arg: $other_ty),*) -> $other_ret {
                        <Self as $Trait>::$other(self, $($other_arg),*)
                    }
                )*
            )*
            $(
                #[doc = concat!("`f64::", stringify!($by_reference), "` of the values.")]
                #[inline]
                pub fn $by_reference(&self, other: &Self) -> std::cmp::Ordering {
                    <Self as Real>::$by_reference(self, other)
                }
            )*

            /// The names of the methods above, for the test that checks the macro knows the
            /// same ones.
            #[doc(hidden)]
            pub const F64_METHODS: &'static [&'static str] = &[
                $($(stringify!($unary),)* $(stringify!($binary),)* $(stringify!($other),)*)*
                $(stringify!($by_reference),)*
            ];
        }
    };
}

/// The inherent methods of both scalar types, with the one-operand methods of the table of
/// rules.
macro_rules! inherent_methods_with_rules {
    ($($rule:ident: |$x:ident, $v:ident| $partial:expr;)*) => {
        with_real_methods!(inherent_float_methods!(impl<> for crate::Var;) rules: $($rule)*);
        with_real_methods!(inherent_float_methods!(
            impl<F: crate::Real, T: crate::Tangent<F>> for crate::Dual<F, T>;
        ) rules: $($rule)*);
    };
}

rules::with_unary_rules!(inherent_methods_with_rules);

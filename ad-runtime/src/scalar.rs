//! The scalar types a `#[reverse_diff]` body runs on, one module each: `f64` itself, [`Var`]
//! (reverse mode, recorded on the thread's tape) and [`Dual`] (forward mode). The derivative
//! of every primitive is written once, in `rules`, over the scalar that carries the partials;
//! each type supplies its chain rule. The macros below write the `Float` methods whose
//! derivative needs no rule, the same way for `Var` and `Dual`.
//!
//! [`Var`]: crate::Var
//! [`Dual`]: crate::Dual

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
            if self.value() >= other.value() || other.value().is_nan() {
                self
            } else {
                other
            }
        }

        /// The receiver on a tie; a NaN operand is ignored.
        #[inline]
        fn min(self, other: Self) -> Self {
            if self.value() <= other.value() || other.value().is_nan() {
                self
            } else {
                other
            }
        }

        /// The bound where the value is clamped, else `self` (a tie included). Same panics as
        /// `f64::clamp` (min > max, or a NaN bound).
        #[inline]
        fn clamp(self, min: Self, max: Self) -> Self {
            let value = self.value().clamp(min.value(), max.value());
            if value < self.value() {
                max
            } else if value > self.value() {
                min
            } else {
                self
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

//! [`Var`]: a real number that records the operations applied to it on the thread's tape.

use std::fmt;

pub(crate) mod float;
mod ops;

/// A scalar recorded on the thread's tape: its value, the index of its node on the tape, and the
/// tag of the tape that made it.
///
/// `Var` is `Copy` and 16 bytes. A `Var` made by [`Var::constant`] (or from a float literal inside
/// a `#[reverse_diff]` function) carries no node: operations whose operands are all constants
/// record nothing. Using a recorded `Var` after its [`Tape`](crate::Tape) has been dropped, on
/// another thread, or on an inner tape that did not make it, panics with a message naming the
/// problem: it never yields a silently wrong gradient.
#[derive(Clone, Copy)]
pub struct Var {
    pub(crate) value: f64,
    pub(crate) index: u32,
    /// The tag of the recording session that made this value; 0 for a constant.
    pub(crate) tape: u32,
}

impl Var {
    /// A constant: a value with no derivative, recorded nowhere.
    #[inline]
    pub const fn constant(value: f64) -> Var {
        Var {
            value,
            index: 0,
            tape: 0,
        }
    }

    /// The value, without its derivative.
    #[inline]
    pub const fn value(self) -> f64 {
        self.value
    }

    /// Whether this value is a constant (it depends on no input of the tape).
    #[inline]
    pub const fn is_constant(self) -> bool {
        self.tape == 0
    }
}

impl Default for Var {
    #[inline]
    fn default() -> Var {
        Var::constant(0.0)
    }
}

impl From<f64> for Var {
    #[inline]
    fn from(value: f64) -> Var {
        Var::constant(value)
    }
}

/// Shows the value only, exactly as `f64` would (with the same width and precision flags), so
/// `println!` in a differentiated function prints the same text for `f64` and `Var`.
impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.value, f)
    }
}

/// Shows the value only, exactly as `f64`'s `Debug` does.
impl fmt::Debug for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.value, f)
    }
}

impl fmt::LowerExp for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerExp::fmt(&self.value, f)
    }
}

impl fmt::UpperExp for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::UpperExp::fmt(&self.value, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn var_is_small_and_copy() {
        assert_eq!(std::mem::size_of::<Var>(), 16);
        fn is_copy<T: Copy>() {}
        is_copy::<Var>();
    }
}

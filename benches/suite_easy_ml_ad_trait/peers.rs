//! `easy-ml` and `ad_trait` (both reverse mode) as [`Scalar`]s, and how each computes a
//! gradient.

use ad_trait::nalgebra::ComplexField;
use ad_trait::reverse_ad::adr::adr;
use ad_trait::AD;
use easy_ml::differentiation::record_operations::SwappedOperations;
use easy_ml::differentiation::{Record, WengertList};
use easy_ml::numeric::extra::{Exp, Ln};

use crate::common::objectives::Objective;
use crate::common::scalar::Scalar;

/// `easy-ml` (reverse mode, `Record` on a `WengertList`). Its `Real` trait has no `tanh`; the
/// crate's documentation shows `tanh` through `Record::unary` with the derivative `1 − tanh²`,
/// which is one record, as for the other peers.
impl<'a> Scalar for Record<'a, f64> {
    fn scale(self, c: f64) -> Self {
        self * c
    }
    fn shift(self, c: f64) -> Self {
        self + c
    }
    fn subtract_from(self, c: f64) -> Self {
        self.sub_swapped(c)
    }
    fn tanh(self) -> Self {
        let result = self.unary(f64::tanh, |x| 1.0 - x.tanh() * x.tanh());
        // `unary` ties its result to the borrow of `self`; the record lives on the same list.
        Record::from_existing((result.number, result.index), self.history())
    }
    fn exp(self) -> Self {
        Exp::exp(self)
    }
    fn ln(self) -> Self {
        Ln::ln(self)
    }
    fn value(self) -> f64 {
        self.number
    }
}

/// `ad_trait`'s reverse mode (`adr` on a thread-local computation graph).
impl Scalar for adr {
    fn scale(self, c: f64) -> Self {
        <adr as AD>::mul_scalar(c, self)
    }
    fn shift(self, c: f64) -> Self {
        <adr as AD>::add_scalar(c, self)
    }
    fn subtract_from(self, c: f64) -> Self {
        <adr as AD>::sub_l_scalar(c, self)
    }
    fn tanh(self) -> Self {
        ComplexField::tanh(self)
    }
    fn exp(self) -> Self {
        ComplexField::exp(self)
    }
    fn ln(self) -> Self {
        ComplexField::ln(self)
    }
    fn value(self) -> f64 {
        adr::value(&self)
    }
}

// --- gradients ----------------------------------------------------------------------------------
// Each driver returns `(value, gradient)`, the gradient flat in the order of the objective's
// inputs, and uses the crate as its documentation shows with the least work it allows: tapes
// are reused between calls (cleared, capacity kept).

/// `easy-ml`: `Record`s on a `WengertList`, `derivatives()` on the result, indexed by the
/// records.
pub fn easy_ml(
    list: &WengertList<f64>,
    objective: &impl Objective,
    inputs: &[f64],
) -> (f64, Vec<f64>) {
    list.clear();
    let variables: Vec<Record<f64>> = inputs.iter().map(|&x| list.variable(x)).collect();
    let result = objective.eval(&variables);
    let derivatives = result.derivatives();
    let gradient = variables.iter().map(|v| derivatives[v]).collect();
    (result.number, gradient)
}

/// `ad_trait`'s reverse mode: `adr::new_variable` (the first one resets the thread's graph),
/// `get_backwards_mode_grad()` on the result, `wrt` the variables.
pub fn ad_trait(objective: &impl Objective, inputs: &[f64]) -> (f64, Vec<f64>) {
    let variables: Vec<adr> = inputs
        .iter()
        .enumerate()
        .map(|(i, &x)| adr::new_variable(x, i == 0))
        .collect();
    let result = objective.eval(&variables);
    let adjoints = result.get_backwards_mode_grad();
    let gradient = variables.iter().map(|v| adjoints.wrt(v)).collect();
    (result.value(), gradient)
}

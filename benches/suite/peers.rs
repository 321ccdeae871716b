//! The peers that can share a crate with `#[reverse_diff]` functions — `num-dual` and
//! `autodiff` (forward mode), `reverse` (reverse mode) — as [`Scalar`]s, and how each computes
//! a gradient.

use autodiff::{Float, F1};
use num_dual::{Dual64, DualNum, DualSVec64};

use crate::common::objectives::Objective;
use crate::common::scalar::Scalar;

/// `reverse` (reverse mode, a `RefCell<Vec<Node>>` tape borrowed by every `Var`).
impl Scalar for reverse::Var<'_> {
    fn scale(self, c: f64) -> Self {
        self * c
    }
    fn shift(self, c: f64) -> Self {
        self + c
    }
    fn subtract_from(self, c: f64) -> Self {
        c - self
    }
    fn tanh(self) -> Self {
        reverse::Var::tanh(&self)
    }
    fn exp(self) -> Self {
        reverse::Var::exp(&self)
    }
    fn ln(self) -> Self {
        reverse::Var::ln(&self)
    }
    fn value(self) -> f64 {
        self.val()
    }
}

/// `num-dual`'s scalar dual number: forward mode, one directional derivative per pass.
impl Scalar for Dual64 {
    fn scale(self, c: f64) -> Self {
        self * c
    }
    fn shift(self, c: f64) -> Self {
        self + c
    }
    fn subtract_from(self, c: f64) -> Self {
        -self + c
    }
    fn tanh(self) -> Self {
        DualNum::tanh(&self)
    }
    fn exp(self) -> Self {
        DualNum::exp(&self)
    }
    fn ln(self) -> Self {
        DualNum::ln(&self)
    }
    fn value(self) -> f64 {
        self.re
    }
}

/// `num-dual`'s vector dual number with `N` derivative components on the stack: forward mode,
/// the whole gradient in one pass when the input count `N` is small and known.
impl<const N: usize> Scalar for DualSVec64<N> {
    fn scale(self, c: f64) -> Self {
        self * c
    }
    fn shift(self, c: f64) -> Self {
        self + c
    }
    fn subtract_from(self, c: f64) -> Self {
        -self + c
    }
    fn tanh(self) -> Self {
        DualNum::tanh(&self)
    }
    fn exp(self) -> Self {
        DualNum::exp(&self)
    }
    fn ln(self) -> Self {
        DualNum::ln(&self)
    }
    fn value(self) -> f64 {
        self.re
    }
}

/// `autodiff`'s forward-mode dual number (`F1`): one directional derivative per pass.
impl Scalar for F1 {
    fn scale(self, c: f64) -> Self {
        self * c
    }
    fn shift(self, c: f64) -> Self {
        self + c
    }
    fn subtract_from(self, c: f64) -> Self {
        c - self
    }
    fn tanh(self) -> Self {
        Float::tanh(self)
    }
    fn exp(self) -> Self {
        Float::exp(self)
    }
    fn ln(self) -> Self {
        Float::ln(self)
    }
    fn value(self) -> f64 {
        F1::value(&self)
    }
}

// --- gradients ----------------------------------------------------------------------------------
// Each driver returns `(value, gradient)`, the gradient flat in the order of the objective's
// inputs, and uses the crate as its documentation shows with the least work it allows: tapes
// are reused between calls (cleared, capacity kept).

/// `reverse`: variables on a `Tape`, `grad()` on the result, `wrt` the variables.
pub fn reverse(
    tape: &reverse::Tape,
    objective: &impl Objective,
    inputs: &[f64],
) -> (f64, Vec<f64>) {
    use reverse::Gradient;
    tape.clear();
    let variables = tape.add_vars(inputs);
    let result = objective.eval(&variables);
    let adjoints = result.grad();
    (result.val(), adjoints.wrt(&variables))
}

/// `num-dual` with `Dual64`: one forward pass per input, seeding that input's derivative.
pub fn num_dual_passes(objective: &impl Objective, inputs: &[f64]) -> (f64, Vec<f64>) {
    let mut duals: Vec<Dual64> = inputs.iter().map(|&x| Dual64::from_re(x)).collect();
    let mut value = f64::NAN;
    let mut gradient = Vec::with_capacity(inputs.len());
    for i in 0..inputs.len() {
        duals[i].eps = 1.0;
        let result = objective.eval(&duals);
        duals[i].eps = 0.0;
        value = result.re;
        gradient.push(result.eps);
    }
    (value, gradient)
}

/// `num-dual` with `DualSVec64<N>`: the whole gradient in one forward pass, `N` derivative
/// components on the stack (`N` must be the input count).
pub fn num_dual_vector<const N: usize>(
    objective: &impl Objective,
    inputs: &[f64],
) -> (f64, Vec<f64>) {
    assert_eq!(inputs.len(), N, "DualSVec64<{N}> needs {N} inputs");
    let duals: Vec<DualSVec64<N>> = inputs
        .iter()
        .enumerate()
        .map(|(i, &x)| DualSVec64::<N>::from_re(x).derivative(i))
        .collect();
    let result = objective.eval(&duals);
    let gradient = match &result.eps.0 {
        Some(derivatives) => derivatives.iter().copied().collect(),
        None => vec![0.0; N],
    };
    (result.re, gradient)
}

/// `autodiff`: its `grad`, one forward pass per input. It gives no value: NaN stands for it.
pub fn autodiff(objective: &impl Objective, inputs: &[f64]) -> (f64, Vec<f64>) {
    (f64::NAN, autodiff::grad(|x| objective.eval(x), inputs))
}

//! Point 5 of the foundation issue: a value used many times is recorded once, so long chains
//! cost O(n) time and memory. The tests run chains of 100 000 steps (no timing assertion: a
//! tape that lost sharing would need 2^n records and never finish) and count the records with
//! the public `Tape` API.

use ad::reverse_diff;
use ad::{Tape, Var};
use approx::assert_relative_eq;

/// The length of the chains.
const STEPS: usize = 100_000;

/// The growth factor of each step: small enough that `(1 + c)^n` stays near `e`.
const GROWTH: f64 = 1e-5;

/// `x ← x + x·c`, `n` times: `x` is read twice per step. The value and the derivative are
/// `x₀ (1 + c)^n` and `(1 + c)^n`.
#[reverse_diff]
fn growth_chain(x: f64, n: usize, #[no_grad] c: f64) -> f64 {
    let mut x = x;
    for _ in 0..n {
        x = x + x * c;
    }
    x
}

#[test]
fn long_reassignment_chain_matches_the_analytic_gradient() {
    let x0 = 0.75;
    // `_grad` of one scalar runs in forward mode; `_vjp` records the chain and sweeps it.
    for (value, dx) in [
        growth_chain_grad(x0, STEPS, GROWTH),
        growth_chain_vjp(x0, STEPS, GROWTH, &1.0),
    ] {
        // Analytic: (1 + c)^n. Each pass rounds n times, so allow a relative error of a few n·ε.
        let factor = (1.0 + GROWTH).powi(STEPS as i32);
        assert_relative_eq!(value, x0 * factor, max_relative = 1e-10);
        assert_relative_eq!(dx, factor, max_relative = 1e-10);
        assert_eq!(value.to_bits(), growth_chain(x0, STEPS, GROWTH).to_bits());
    }
}

#[test]
fn long_reassignment_chain_records_one_node_per_step() {
    let tape = Tape::new();
    let x0 = tape.var(0.75);
    let out: Var = growth_chain(x0, STEPS, GROWTH);
    // One input, then per step one record for the statement `x = x + x * c` (c is constant):
    // operand x, partial 1 + c.
    assert_eq!(tape.len(), 1 + STEPS);
    tape.backward(out);
    assert_relative_eq!(
        tape.adjoint(x0),
        (1.0 + GROWTH).powi(STEPS as i32),
        max_relative = 1e-10
    );
}

/// A chain of `let`s in a loop, each bound value read twice: `a = x·s`, `b = a + a`,
/// `x = b / 2`, so every step multiplies by `s`: value `x₀ sⁿ`, derivative `sⁿ`.
#[reverse_diff]
fn let_chain_loop(x: f64, n: usize) -> f64 {
    let mut x = x;
    for _ in 0..n {
        let a = x * 1.00001;
        let b = a + a;
        x = b / 2.0;
    }
    x
}

#[test]
fn long_let_chain_in_a_loop() {
    // Forward mode (`_grad` of one scalar) and the tape (`_vjp`).
    for (value, dx) in [
        let_chain_loop_grad(2.0, STEPS),
        let_chain_loop_vjp(2.0, STEPS, &1.0),
    ] {
        // Analytic: sⁿ with s = 1.00001 (b / 2 = a exactly in binary floating point).
        let factor = 1.00001f64.powi(STEPS as i32);
        assert_relative_eq!(dx, factor, max_relative = 1e-10);
        assert_relative_eq!(value, 2.0 * factor, max_relative = 1e-10);
    }

    let tape = Tape::new();
    let x0 = tape.var(2.0);
    let _: Var = let_chain_loop(x0, STEPS);
    // One input and one record per step: `a` and `b` are computed inside the record of
    // `x = b / 2.0`, the one statement that reads them.
    assert_eq!(tape.len(), 1 + STEPS);
}

/// Doubles `x` by a shadowing `let x = x + x;`, once per token after the `;`.
macro_rules! doubling_lets {
    ($x:ident;) => {};
    ($x:ident; $step:tt $($rest:tt)*) => {
        let $x = $x + $x;
        doubling_lets!($x; $($rest)*);
    };
}

/// One hundred `let x = x + x;` written out (by the macro above): `2¹⁰⁰ x`. Without sharing,
/// the expression tree would have 2¹⁰⁰ leaves.
#[reverse_diff]
fn deep_let_chain(x: f64) -> f64 {
    doubling_lets!(x;
        0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9
        0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9
        0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9
    );
    x * 1.0
}

#[test]
fn deep_let_chain_is_recorded_once_per_let() {
    // Analytic: d/dx 2¹⁰⁰ x = 2¹⁰⁰, exact in floating point.
    let (value, dx) = deep_let_chain_grad(3.0);
    assert_eq!(dx, 2f64.powi(100));
    assert_eq!(value, 3.0 * 2f64.powi(100));

    let tape = Tape::new();
    let x0 = tape.var(3.0);
    let _: Var = deep_let_chain(x0);
    // One input and one record per `let`; `x * 1.0` records one more.
    assert_eq!(tape.len(), 1 + 100 + 1);
}

/// A value shared by many readers: `Σᵢ (x · i)` over `n` terms reads `x` n times.
#[reverse_diff]
fn many_readers(x: f64, n: usize) -> f64 {
    let shared = x * 2.0;
    (0..n).map(|i| shared * i as f64).sum::<f64>()
}

#[test]
fn one_value_read_many_times() {
    // Analytic: f = 2x Σ i = x n (n - 1), f' = n (n - 1).
    let n = STEPS;
    let (value, dx) = many_readers_grad(0.5, n);
    let expected = (n * (n - 1)) as f64;
    assert_eq!(dx, expected);
    assert_eq!(value, 0.5 * expected);
}

//! Checkpointed loops (issue 17): `ad::checkpoint::every` and `ad::checkpoint::revolve` keep
//! only some states on the tape and replay the steps between them during the sweep. The
//! gradient must be the plain loop's bit for bit (same operations, same order), and agree with
//! central differences; the tape must hold fewer records.

mod common;

use ad::{reverse_diff, Tape, Var};
use approx::assert_relative_eq;
use common::{central_gradient, STEP};

#[path = "ode/mod.rs"]
mod ode;

use ode::rk4;

/// Σ y_i(T)² after `steps` RK4 steps, the plain loop.
#[reverse_diff]
fn energy_plain(k: f64, y0: &[f64], steps: usize) -> f64 {
    let mut y = y0.to_vec();
    for _ in 0..steps {
        y = rk4(&y, k, 0.01);
    }
    y.iter().map(|v| v * v).sum::<f64>()
}

/// The same with a snapshot every `interval` steps.
#[reverse_diff]
fn energy_every(k: f64, y0: &[f64], steps: usize, interval: usize) -> f64 {
    let y = ad::checkpoint::every(steps, interval, y0.to_vec(), move |y, _| rk4(y, k, 0.01));
    y.iter().map(|v| v * v).sum::<f64>()
}

/// The same with at most `snapshots` snapshots placed by the binomial schedule.
#[reverse_diff]
fn energy_revolve(k: f64, y0: &[f64], steps: usize, snapshots: usize) -> f64 {
    let y = ad::checkpoint::revolve(steps, snapshots, y0.to_vec(), move |y, _| rk4(y, k, 0.01));
    y.iter().map(|v| v * v).sum::<f64>()
}

const Y0: [f64; 5] = [1.0, -0.5, 0.25, 0.8, -1.2];

#[test]
fn checkpointed_gradients_equal_the_plain_loop_bit_for_bit() {
    for steps in [1, 2, 7, 100, 333] {
        let plain = energy_plain_grad(0.7, &Y0, steps);
        for interval in [1, 3, 10, 1000] {
            assert_eq!(
                energy_every_grad(0.7, &Y0, steps, interval),
                plain,
                "{steps} / {interval}"
            );
        }
        for snapshots in [0, 1, 2, 5, 40] {
            let revolve = energy_revolve_grad(0.7, &Y0, steps, snapshots);
            assert_eq!(revolve, plain, "{steps} steps, {snapshots} snapshots");
        }
    }
}

#[test]
fn checkpointed_gradient_matches_central_differences() {
    let (value, (dk, dy0)) = energy_revolve_grad(0.7, &Y0, 200, 3);
    let mut point = vec![0.7];
    point.extend(Y0);
    let expected = central_gradient(|p| energy_plain(p[0], &p[1..], 200), &point, STEP);
    assert_eq!(value, energy_plain(0.7, &Y0, 200));
    assert_relative_eq!(dk, expected[0], epsilon = 1e-7);
    for (got, want) in dy0.iter().zip(&expected[1..]) {
        assert_relative_eq!(*got, *want, epsilon = 1e-7);
    }
}

#[test]
fn at_f64_the_checkpointed_loop_is_the_plain_loop() {
    assert_eq!(energy_every(0.7, &Y0, 50, 7), energy_plain(0.7, &Y0, 50));
    assert_eq!(energy_revolve(0.7, &Y0, 50, 3), energy_plain(0.7, &Y0, 50));
}

#[test]
fn the_tape_keeps_only_the_snapshots() {
    // After the forward pass, the pullback's tape holds the 6 inputs, the snapshots (5 scalars
    // each) and the 6 records of Σ v² (one per square, one for the sum), against every step's
    // records for the plain loop.
    let (_, plain) = energy_plain_pullback(0.7, &Y0, 1000);
    let (_, every) = energy_every_pullback(0.7, &Y0, 1000, 100);
    let (_, revolve) = energy_revolve_pullback(0.7, &Y0, 1000, 10);
    assert!(plain.len() > 50_000, "{}", plain.len());
    assert_eq!(every.len(), 6 + 10 * 5 + 6);
    assert_eq!(revolve.len(), 6 + 5 + 6);
    // And each still pulls back the plain loop's gradient, as often as asked.
    for cotangent in [1.0, -2.5] {
        let expected = plain.pull(&cotangent);
        assert_eq!(every.pull(&cotangent), expected);
        assert_eq!(revolve.pull(&cotangent), expected);
    }
}

#[test]
fn forward_mode_and_hessians_run_the_loop_as_written() {
    // Two input scalars: f_grad runs in forward mode; f_hvp on Dual<Var>.
    #[reverse_diff]
    fn two(k: f64, y: [f64; 1]) -> f64 {
        let y = ad::checkpoint::revolve(20, 2, y.to_vec(), move |y, _| vec![y[0] - 0.1 * k * y[0]]);
        y[0] * y[0]
    }
    // y(20) = (1 − k/10)^20 y, so the value is (1 − k/10)^40 y².
    let (k, y) = (0.5, 1.5);
    let factor: f64 = 1.0 - 0.1 * k;
    let (value, (dk, dy)) = two_grad(k, [y]);
    assert_relative_eq!(value, factor.powi(40) * y * y, epsilon = 1e-13);
    assert_relative_eq!(dk, -4.0 * factor.powi(39) * y * y, epsilon = 1e-13);
    assert_relative_eq!(dy[0], 2.0 * factor.powi(40) * y, epsilon = 1e-13);
    let (_, _, (hk, _)) = two_hvp(k, [y], 1.0, [0.0]);
    assert_relative_eq!(hk, 15.6 * factor.powi(38) * y * y, epsilon = 1e-12);
}

#[test]
fn runs_on_the_raw_tape_with_nested_tapes_in_the_step() {
    // A step that differentiates something on a nested tape of its own, run every step
    // (twice with replays): the outer gradient is the plain one.
    let step = |state: &[Var], _: usize| -> Vec<Var> {
        let inner = Tape::new();
        let t = inner.var(2.0);
        let square = t * t;
        inner.backward(square);
        let slope = inner.adjoint(t); // 4
        drop(inner);
        state.iter().map(|s| s.sin() * slope).collect()
    };
    let run = |checkpointed: bool| {
        let tape = Tape::new();
        let x = tape.var(0.3);
        let y = if checkpointed {
            ad::checkpoint::every(9, 2, vec![x], step)
        } else {
            (0..9).fold(vec![x], |state, i| step(&state, i))
        };
        tape.backward(y[0]);
        (y[0].value(), tape.adjoint(x))
    };
    assert_eq!(run(true), run(false));
}

#[test]
#[should_panic(
    expected = "a checkpointed segment gave 0 scalars when replayed and 1 the first time"
)]
fn a_step_that_changes_on_replay_is_reported() {
    use std::cell::Cell;
    use std::rc::Rc;
    let calls = Rc::new(Cell::new(0));
    let tape = Tape::new();
    let x = tape.var(0.3);
    let counted = Rc::clone(&calls);
    let y = ad::checkpoint::every(4, 4, vec![x], move |state: &[Var], _| {
        counted.set(counted.get() + 1);
        if counted.get() > 4 {
            Vec::new()
        } else {
            vec![state[0] * 2.0]
        }
    });
    tape.backward(y[0]);
}

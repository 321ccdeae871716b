//! particle: the control `w` that makes a charged particle, pushed by the field of two fixed
//! charges, hit the origin. The forces are the gradient of the potential (inner derivative,
//! taken inside `miss`), and `w` is found by gradient descent on `miss`, differentiated through
//! the whole Euler integration and the inner derivatives (outer derivative).
//!
//! The four functions name the outer and inner modes: `ff`, `fr`, `rf`, `rr` (forward or reverse
//! for the descent on `w`, then for the forces). Forward outside is `miss_grad` (one scalar:
//! forward mode), reverse outside `miss_vjp` (the tape); reverse inside is `potential_grad`
//! (nested: a linear tape), forward inside `potential_jvp` along each axis.

use super::descent::argmin;
use super::{parse, unknown_function};
use crate::protocol::Evaluation;
use ad::reverse_diff;
use serde::Deserialize;
use serde_json::Value;

/// particle's input: the starting control.
#[derive(Deserialize)]
struct Input {
    w: f64,
}

/// The electric potential at `x` of unit charges at (10, 10 − w) and (10, 0).
#[reverse_diff]
fn potential(x: [f64; 2], w: f64) -> f64 {
    let charges = [[10.0, 10.0 - w], [10.0, 0.0]];
    let mut total = 0.0;
    for charge in charges {
        let (dx, dy) = (charge[0] - x[0], charge[1] - x[1]);
        total += 1.0 / (dx * dx + dy * dy).sqrt();
    }
    total
}

/// The squared distance from the origin at which the particle, starting at (0, 8) with velocity
/// (0.75, 0), crosses the x axis: naive Euler steps of 0.1 with acceleration −∇potential, and a
/// linear interpolation to the axis.
#[reverse_diff]
fn miss(w: f64, #[no_grad] inner_reverse: bool) -> f64 {
    let dt = 0.1;
    let mut x = [0.0, 8.0];
    let mut velocity = [0.75, 0.0];
    loop {
        let gradient = if inner_reverse {
            potential_grad(x, w).1 .0
        } else {
            [
                potential_jvp(x, w, [1.0, 0.0], 0.0).1,
                potential_jvp(x, w, [0.0, 1.0], 0.0).1,
            ]
        };
        x = [x[0] + dt * velocity[0], x[1] + dt * velocity[1]];
        if x[1] <= 0.0 {
            let dt_final = -x[1] / velocity[1];
            let x_final = x[0] + dt_final * velocity[0];
            return x_final * x_final;
        }
        velocity = [
            velocity[0] - dt * gradient[0],
            velocity[1] - dt * gradient[1],
        ];
    }
}

/// The control found by gradient descent from `w`, with the outer and inner modes `function`
/// names.
fn control(function: &str, w: f64) -> f64 {
    let inner_reverse = function.ends_with('r');
    let outer_reverse = function.starts_with('r');
    let objective = |w: [f64; 1]| miss(w[0], inner_reverse);
    let gradient = |w: [f64; 1]| {
        if outer_reverse {
            [miss_vjp(w[0], inner_reverse, &1.0).1]
        } else {
            [miss_grad(w[0], inner_reverse).1]
        }
    };
    argmin([w], objective, gradient)[0]
}

/// particle's functions: `ff`, `fr`, `rf` and `rr`, which give the same control.
pub fn evaluate(function: &str, input: Value) -> Result<Evaluation, String> {
    let (Input { w }, runs) = parse(input)?;
    match function {
        "ff" | "fr" | "rf" | "rr" => Ok(runs.evaluate(|| control(function, w))),
        _ => Err(unknown_function(
            "particle",
            function,
            &["ff", "fr", "rf", "rr"],
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_derivative_of_the_miss_matches_central_differences() {
        let h = 1e-6;
        for w in [0.0, 0.3] {
            let fd = (miss(w + h, true) - miss(w - h, true)) / (2.0 * h);
            for inner_reverse in [false, true] {
                let (_, forward) = miss_grad(w, inner_reverse);
                let (_, reverse) = miss_vjp(w, inner_reverse, &1.0);
                assert!(
                    (forward - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
                    "{forward} {fd}"
                );
                assert!((reverse - forward).abs() <= 1e-12 * (1.0 + fd.abs()));
            }
        }
    }

    #[test]
    fn every_mode_finds_the_published_control() {
        // gradbench validates particle against this constant.
        for function in ["ff", "fr", "rf", "rr"] {
            let w = control(function, 0.0);
            assert!((w - 0.2071918746486116).abs() < 1e-6, "{function}: {w}");
        }
    }
}

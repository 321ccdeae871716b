//! saddle: the saddle point of `f(p, q) = |p|² − |q|²`, as `argmin_p max_q f(p, q)` by gradient
//! descent inside gradient descent. The inner maximisation (its gradient in `q` an inner
//! derivative) runs inside `best_response`, which the outer descent on `p` differentiates.
//!
//! The four functions name the outer and inner modes: `ff`, `fr`, `rf`, `rr`. Forward outside is
//! `best_response_grad` (four scalars: forward mode), reverse outside `best_response_vjp` (the
//! tape); reverse inside is `f_grad` (nested: a linear tape), forward inside `f_jvp` along each
//! axis.

use super::descent::{argmax, argmin};
use super::{check, parse, unknown_function};
use crate::protocol::Evaluation;
use ad::reverse_diff;
use serde::Deserialize;
use serde_json::Value;

/// saddle's input: the starting point of every descent.
#[derive(Deserialize)]
struct Input {
    start: Vec<f64>,
}

/// The function whose saddle point is sought.
#[reverse_diff]
fn f(p: [f64; 2], q: [f64; 2]) -> f64 {
    (p[0] * p[0] + p[1] * p[1]) - (q[0] * q[0] + q[1] * q[1])
}

/// The gradient of `f` in `q`, in the inner mode.
#[reverse_diff]
fn gradient_in_q(p: [f64; 2], q: [f64; 2], #[no_grad] inner_reverse: bool) -> [f64; 2] {
    if inner_reverse {
        f_grad(p, q).1 .1
    } else {
        [
            f_jvp(p, q, [0.0, 0.0], [1.0, 0.0]).1,
            f_jvp(p, q, [0.0, 0.0], [0.0, 1.0]).1,
        ]
    }
}

/// `max_q f(p, q)`, with `q` found by gradient ascent from `start`.
#[reverse_diff]
fn best_response(p: [f64; 2], start: [f64; 2], #[no_grad] inner_reverse: bool) -> f64 {
    let q = argmax(start, |q| f(p, q), |q| gradient_in_q(p, q, inner_reverse));
    f(p, q)
}

/// The saddle point `(p, q)` found from `start` with the outer and inner modes `function` names.
fn saddle(function: &str, start: [f64; 2]) -> [f64; 4] {
    let inner_reverse = function.ends_with('r');
    let outer_reverse = function.starts_with('r');
    let p = argmin(
        start,
        |p| best_response(p, start, inner_reverse),
        |p| {
            if outer_reverse {
                best_response_vjp(p, start, inner_reverse, &1.0).1 .0
            } else {
                best_response_grad(p, start, inner_reverse).1 .0
            }
        },
    );
    let q = argmax(start, |q| f(p, q), |q| gradient_in_q(p, q, inner_reverse));
    [p[0], p[1], q[0], q[1]]
}

/// saddle's functions: `ff`, `fr`, `rf` and `rr`, which give the same point.
pub fn evaluate(function: &str, input: Value) -> Result<Evaluation, String> {
    let (Input { start }, runs) = parse(input)?;
    check(start.len() == 2, || {
        format!("`start` has {} entries, expected 2", start.len())
    })?;
    let start = [start[0], start[1]];
    match function {
        "ff" | "fr" | "rf" | "rr" => Ok(runs.evaluate(|| saddle(function, start))),
        _ => Err(unknown_function(
            "saddle",
            function,
            &["ff", "fr", "rf", "rr"],
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_derivative_of_the_best_response_matches_central_differences() {
        let (p, start, h) = ([0.7, -0.4], [1.0, 1.0], 1e-6);
        for inner_reverse in [false, true] {
            let (_, (forward, _)) = best_response_grad(p, start, inner_reverse);
            let (_, (reverse, _)) = best_response_vjp(p, start, inner_reverse, &1.0);
            for i in 0..2 {
                let (mut up, mut down) = (p, p);
                up[i] += h;
                down[i] -= h;
                let fd = (best_response(up, start, inner_reverse)
                    - best_response(down, start, inner_reverse))
                    / (2.0 * h);
                assert!((forward[i] - fd).abs() <= 1e-5, "{} {fd}", forward[i]);
                assert!((reverse[i] - forward[i]).abs() <= 1e-12);
            }
        }
    }

    #[test]
    fn every_mode_finds_the_published_point() {
        // gradbench validates saddle against this constant, in every entry.
        for function in ["ff", "fr", "rf", "rr"] {
            let point = saddle(function, [1.0, 1.0]);
            for x in point {
                assert!(
                    (x - 8.246324826140356e-06).abs() < 1e-9,
                    "{function}: {point:?}"
                );
            }
        }
    }
}

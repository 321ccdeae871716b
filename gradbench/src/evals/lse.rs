//! lse: `ln Σ_i exp(x_i)`, computed stably around the largest `x_i`, as ADBench's GMM
//! (`tests/adbench/gmm.rs`) computes its log-sum-exps.

use super::{check, parse, unknown_function};
use crate::protocol::Evaluation;
use ad::reverse_diff;
use serde::Deserialize;
use serde_json::Value;

/// `LSE(v) = max(v) + ln Σ_j exp(v_j − max(v))`. The maximum is one of the `v_j`, as in ADBench's
/// C++; the derivative through it, `1 − Σ_j softmax(v)_j`, is 0 up to rounding, so the
/// gradient is the one with the maximum held constant.
#[reverse_diff]
pub fn log_sum_exp(v: &[f64]) -> f64 {
    let mut largest = v[0];
    for &value in &v[1..] {
        if value > largest {
            largest = value;
        }
    }
    let sum: f64 = v.iter().map(|value| (value - largest).exp()).sum();
    largest + sum.ln()
}

/// lse's input.
#[derive(Deserialize)]
struct Input {
    x: Vec<f64>,
}

/// lse's functions: `primal` and its `gradient` (the softmax of `x`).
pub fn evaluate(function: &str, input: Value) -> Result<Evaluation, String> {
    let (Input { x }, runs) = parse(input)?;
    check(!x.is_empty(), || "`x` is empty".to_string())?;
    match function {
        "primal" => Ok(runs.evaluate(|| log_sum_exp(&x))),
        "gradient" => Ok(runs.evaluate(|| log_sum_exp_grad(&x).1)),
        _ => Err(unknown_function("lse", function, &["primal", "gradient"])),
    }
}

//! lse: `ln Σ_i exp(x_i)`, computed stably around the largest `x_i`. The function is the one of
//! ADBench's GMM (`tests/adbench/gmm.rs`), which has the same definition.

use super::{check, parse, unknown_function};
use crate::adbench::gmm::{log_sum_exp, log_sum_exp_grad};
use crate::protocol::Evaluation;
use serde::Deserialize;
use serde_json::Value;

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

//! lstm: ADBench's character-level LSTM loss (`tests/adbench/lstm.rs`), and its gradient with
//! respect to the main parameters then the extra ones.

use super::{check, flatten, parse, unknown_function};
use crate::adbench::lstm::{lstm_objective, lstm_objective_grad};
use crate::protocol::{Evaluation, Runs};
use serde::Deserialize;
use serde_json::Value;

/// lstm's input: `2l` rows of `4b` weights and biases, 3 rows of `b` extra parameters, `2l`
/// rows of `b` of state, and `c` characters of `b` bits.
#[derive(Deserialize)]
struct Input {
    main_params: Vec<Vec<f64>>,
    extra_params: Vec<Vec<f64>>,
    state: Vec<Vec<f64>>,
    sequence: Vec<Vec<f64>>,
}

/// An instance, each matrix flattened row by row.
struct Instance {
    l: usize,
    c: usize,
    b: usize,
    main_params: Vec<f64>,
    extra_params: Vec<f64>,
    state: Vec<f64>,
    sequence: Vec<f64>,
}

impl Instance {
    /// Checks the shapes of `input` (as gradbench's reference reads them: `l` and `b` from
    /// `main_params`, `c` from `sequence`) and flattens it.
    fn new(input: Input) -> Result<Instance, String> {
        let rows = input.main_params.len();
        check(rows >= 2 && rows % 2 == 0, || {
            format!("`main_params` has {rows} rows, expected an even number, at least 2")
        })?;
        let width = input.main_params[0].len();
        check(width >= 4 && width % 4 == 0, || {
            format!("`main_params` rows have {width} entries, expected a multiple of 4")
        })?;
        let (l, b, c) = (rows / 2, width / 4, input.sequence.len());
        check(c >= 2, || {
            format!("`sequence` has {c} characters, expected at least 2")
        })?;
        Ok(Instance {
            l,
            c,
            b,
            main_params: flatten("main_params", &input.main_params, None, 4 * b)?,
            extra_params: flatten("extra_params", &input.extra_params, Some(3), b)?,
            state: flatten("state", &input.state, Some(2 * l), b)?,
            sequence: flatten("sequence", &input.sequence, None, b)?,
        })
    }
}

/// lstm's functions: the `objective` and its gradient (`jacobian`, main then extra parameters).
pub fn evaluate(function: &str, input: Value) -> Result<Evaluation, String> {
    let (input, runs): (Input, Runs) = parse(input)?;
    let Instance {
        l,
        c,
        b,
        main_params,
        extra_params,
        state,
        sequence,
    } = Instance::new(input)?;
    match function {
        "objective" => Ok(runs
            .evaluate(|| lstm_objective(&main_params, &extra_params, &state, &sequence, l, c, b))),
        "jacobian" => Ok(runs.evaluate(|| {
            let (_, (d_main, d_extra)) =
                lstm_objective_grad(&main_params, &extra_params, &state, &sequence, l, c, b);
            [d_main, d_extra].concat()
        })),
        _ => Err(unknown_function(
            "lstm",
            function,
            &["objective", "jacobian"],
        )),
    }
}

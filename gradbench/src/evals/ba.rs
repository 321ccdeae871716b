//! ba: ADBench's bundle adjustment (`tests/adbench/ba.rs`): the reprojection and weight errors
//! of `p` observations, and their sparse Jacobian. gradbench sends one camera, point, weight
//! and feature, replicated as ADBench does, and compares only a summary of the results: one
//! reprojection error and one weight error with their counts, and the first 30 and the last
//! entries of the Jacobian's three CSR arrays (row offsets, column indices, values).

use super::{check, parse, unknown_function};
use crate::adbench::ba::{
    ba_jacobian_into, ba_objective_into, BaInput, CsrMatrix, CAMERA_SIZE, OBSERVATION_SIZE,
};
use crate::protocol::{Evaluation, Runs};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// ba's input: the counts, and the camera, point, weight and feature to replicate.
#[derive(Deserialize)]
struct Input {
    n: usize,
    m: usize,
    p: usize,
    cam: [f64; CAMERA_SIZE],
    x: [f64; 3],
    w: f64,
    feat: [f64; 2],
}

/// The summary gradbench compares of the Jacobian: the first `2 × 15` (one observation's two
/// rows) and the last entries of each CSR array.
#[derive(Serialize)]
struct JacobianSummary {
    rows: Vec<usize>,
    cols: Vec<usize>,
    vals: Vec<f64>,
}

/// The first two rows' worth of entries and the last entry of `values`.
fn summary<T: Copy>(values: &[T]) -> Vec<T> {
    let head = values.iter().take(2 * OBSERVATION_SIZE);
    head.chain(values.last()).copied().collect()
}

/// ba's functions: the `objective` (all residuals) and its sparse `jacobian`.
pub fn evaluate(function: &str, input: Value) -> Result<Evaluation, String> {
    let (input, runs): (Input, Runs) = parse(input)?;
    let Input {
        n,
        m,
        p,
        cam,
        x,
        w,
        feat,
    } = input;
    check(n >= 1 && m >= 1 && p >= 1, || {
        format!("n = {n}, m = {m}, p = {p}, expected at least one of each")
    })?;
    let instance = BaInput::replicated([n, m, p], cam, x, w, feat);
    match function {
        "objective" => {
            let mut residuals = (Vec::new(), Vec::new());
            let ((), timings) = runs.measure(|| ba_objective_into(&instance, &mut residuals));
            let (reprojection, weights) = residuals;
            let output = json!({
                "reproj_error": { "elements": &reprojection[..2], "repeated": p },
                "w_err": { "element": weights[0], "repeated": p },
            });
            Ok(Evaluation::new(output, timings))
        }
        "jacobian" => {
            let mut jacobian = CsrMatrix::new();
            let ((), timings) = runs.measure(|| ba_jacobian_into(&instance, &mut jacobian));
            let output = JacobianSummary {
                rows: summary(&jacobian.row_offsets),
                cols: summary(&jacobian.column_indices),
                vals: summary(&jacobian.values),
            };
            Ok(Evaluation::new(output, timings))
        }
        _ => Err(unknown_function("ba", function, &["objective", "jacobian"])),
    }
}

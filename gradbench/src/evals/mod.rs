//! gradbench's evals, one module each: the eval's functions written as ordinary Rust over `f64`
//! with `#[ad::reverse_diff]`, their derivatives from the generated companions, and the
//! conversion of the eval's JSON input and output.
//!
//! Each module checks its input (shapes, indices) before computing, so that a malformed input
//! gets an error naming what is wrong instead of a panic, then times the computation alone with
//! [`Runs`].

mod ba;
mod descent;
mod det;
mod gmm;
mod hello;
mod ht;
mod kmeans;
mod llsq;
mod lse;
mod lstm;
mod ode;
mod particle;
mod saddle;

use crate::protocol::{Evaluation, Runs};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One eval's entry point: runs `function` on `input`.
type Evaluate = fn(function: &str, input: Value) -> Result<Evaluation, String>;

/// The modules this tool implements, by gradbench's module (= eval) name.
const MODULES: [(&str, Evaluate); 12] = [
    ("hello", hello::evaluate),
    ("llsq", llsq::evaluate),
    ("lse", lse::evaluate),
    ("det", det::evaluate),
    ("ode", ode::evaluate),
    ("kmeans", kmeans::evaluate),
    ("gmm", gmm::evaluate),
    ("lstm", lstm::evaluate),
    ("ba", ba::evaluate),
    ("ht", ht::evaluate),
    ("particle", particle::evaluate),
    ("saddle", saddle::evaluate),
];

/// Whether `module` is implemented, and if not, why.
pub fn define(module: &str) -> Result<(), String> {
    find(module).map(|_| ())
}

/// Runs `function` of `module` on `input`.
pub fn evaluate(module: &str, function: &str, input: Value) -> Result<Evaluation, String> {
    find(module)?(function, input)
}

fn find(module: &str) -> Result<Evaluate, String> {
    if let Some((_, evaluate)) = MODULES.iter().find(|(name, _)| *name == module) {
        return Ok(*evaluate);
    }
    let known: Vec<&str> = MODULES.iter().map(|(name, _)| *name).collect();
    Err(format!(
        "unknown module `{module}` (ad-gradbench implements {})",
        known.join(", ")
    ))
}

/// The input as `T`, and the runs it asks for.
fn parse<T: DeserializeOwned>(input: Value) -> Result<(T, Runs), String> {
    let runs = Runs::of(&input)?;
    let parsed = serde_json::from_value(input).map_err(|error| format!("input: {error}"))?;
    Ok((parsed, runs))
}

/// The error for a function an eval does not have.
fn unknown_function(module: &str, function: &str, known: &[&str]) -> String {
    format!(
        "unknown function `{function}` of module {module} (expected {})",
        known.join(" or ")
    )
}

/// `Err(what)` unless `holds`: the checks of the inputs' shapes.
fn check(holds: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if holds {
        Ok(())
    } else {
        Err(format!("input: {}", what()))
    }
}

/// The rows of a matrix given as nested arrays, concatenated, after checking that there are
/// `rows` rows (if given) of `columns` entries each.
fn flatten(
    name: &str,
    matrix: &[Vec<f64>],
    rows: Option<usize>,
    columns: usize,
) -> Result<Vec<f64>, String> {
    if let Some(rows) = rows {
        check(matrix.len() == rows, || {
            format!("`{name}` has {} rows, expected {rows}", matrix.len())
        })?;
    }
    for (i, row) in matrix.iter().enumerate() {
        check(row.len() == columns, || {
            format!(
                "row {i} of `{name}` has {} entries, expected {columns}",
                row.len()
            )
        })?;
    }
    Ok(matrix.concat())
}

/// `values` cut into rows of `columns`, as the nested arrays the evals expect.
fn rows(values: &[f64], columns: usize) -> Vec<Vec<f64>> {
    values.chunks(columns.max(1)).map(<[f64]>::to_vec).collect()
}

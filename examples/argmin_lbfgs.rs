//! Minimises the extended Rosenbrock function in 100 dimensions with argmin's L-BFGS, giving
//! argmin the gradient that `#[reverse_diff]` generates as `rosenbrock_grad` through its
//! `CostFunction` and `Gradient` traits.
//!
//! Run it with `cargo run --release --example argmin_lbfgs`.

use argmin::core::{CostFunction, Error, Executor, Gradient, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use std::process::ExitCode;
use std::time::Instant;

#[path = "common/rosenbrock.rs"]
mod objective;
use objective::{rosenbrock, rosenbrock_grad};

/// The number of variables.
const DIMENSIONS: usize = 100;
/// How many past steps L-BFGS keeps to approximate the inverse Hessian.
const HISTORY: usize = 10;
/// Give up after this many iterations (about 500 are needed).
const MAX_ITERATIONS: u64 = 5_000;
/// The run succeeds when the result is this close (Euclidean distance) to `(1, …, 1)`.
const DISTANCE_TOLERANCE: f64 = 1e-5;

/// The problem argmin sees: the value from `rosenbrock` itself (no tape), the gradient from
/// the generated `rosenbrock_grad`.
struct Rosenbrock;

impl CostFunction for Rosenbrock {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, x: &Vec<f64>) -> Result<f64, Error> {
        Ok(rosenbrock(x))
    }
}

impl Gradient for Rosenbrock {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;

    fn gradient(&self, x: &Vec<f64>) -> Result<Vec<f64>, Error> {
        let (_value, gradient) = rosenbrock_grad(x);
        Ok(gradient)
    }
}

fn main() -> Result<ExitCode, Error> {
    // The standard start: −1.2 at even indices, 1.0 at odd ones.
    let start: Vec<f64> = (0..DIMENSIONS)
        .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
        .collect();
    let line_search = MoreThuenteLineSearch::new().with_c(1e-4, 0.9)?;
    let solver = LBFGS::new(line_search, HISTORY)
        .with_tolerance_grad(1e-10)?
        .with_tolerance_cost(0.0)?;
    let started = Instant::now();
    let result = Executor::new(Rosenbrock, solver)
        .configure(|state| state.param(start).max_iters(MAX_ITERATIONS))
        .run()?;
    let state = result.state();
    let x = state.get_best_param().expect("L-BFGS keeps its best point");
    let distance = x.iter().map(|xi| (xi - 1.0).powi(2)).sum::<f64>().sqrt();
    println!(
        "argmin's L-BFGS: {} iterations in {:.3} s, {}",
        state.get_iter(),
        started.elapsed().as_secs_f64(),
        state.get_termination_status()
    );
    println!("f(x) = {:.3e}", state.get_best_cost());
    println!("x[..4] = {:?}", &x[..4]);
    println!("distance to the optimum (1, …, 1): {distance:.3e}");
    if distance < DISTANCE_TOLERANCE {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("error: L-BFGS did not reach the optimum (distance ≥ {DISTANCE_TOLERANCE:e})");
        Ok(ExitCode::FAILURE)
    }
}

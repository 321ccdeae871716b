//! Minimises the extended Rosenbrock function in 1 000 dimensions with L-BFGS, using the exact
//! gradient that `#[reverse_diff]` generates as `rosenbrock_grad`.
//!
//! Run it with `cargo run --release --example rosenbrock`.

use std::collections::VecDeque;
use std::process::ExitCode;
use std::time::Instant;

#[path = "common/rosenbrock.rs"]
mod objective;
use objective::rosenbrock_grad;

/// The number of variables.
const DIMENSIONS: usize = 1_000;
/// How many past steps L-BFGS keeps to approximate the inverse Hessian.
const HISTORY: usize = 10;
/// Give up after this many iterations (about 5 000 are needed).
const MAX_ITERATIONS: usize = 20_000;
/// Stop when the gradient's norm falls below this.
const GRADIENT_TOLERANCE: f64 = 1e-10;
/// Print a progress line every this many iterations.
const REPORT_EVERY: usize = 500;

/// The dot product of two vectors of equal length.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The L-BFGS two-loop recursion: `−H ∇f` with `H` built from the stored pairs `(s, y)`
/// (step, change of gradient), oldest first.
fn search_direction(gradient: &[f64], history: &VecDeque<(Vec<f64>, Vec<f64>)>) -> Vec<f64> {
    let mut direction: Vec<f64> = gradient.iter().map(|g| -g).collect();
    let mut alphas = Vec::with_capacity(history.len());
    for (s, y) in history.iter().rev() {
        let alpha = dot(s, &direction) / dot(y, s);
        direction
            .iter_mut()
            .zip(y)
            .for_each(|(d, y)| *d -= alpha * y);
        alphas.push(alpha);
    }
    if let Some((s, y)) = history.back() {
        let scale = dot(s, y) / dot(y, y);
        direction.iter_mut().for_each(|d| *d *= scale);
    }
    for ((s, y), alpha) in history.iter().zip(alphas.iter().rev()) {
        let beta = dot(y, &direction) / dot(y, s);
        direction
            .iter_mut()
            .zip(s)
            .for_each(|(d, s)| *d += (alpha - beta) * s);
    }
    direction
}

fn main() -> ExitCode {
    // The standard start: −1.2 at even indices, 1.0 at odd ones.
    let mut x: Vec<f64> = (0..DIMENSIONS)
        .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
        .collect();
    let (mut value, mut gradient) = rosenbrock_grad(&x);
    let mut history = VecDeque::with_capacity(HISTORY);
    let mut evaluations = 1;
    let started = Instant::now();
    let mut iteration = 0;
    println!("{:>9} {:>14} {:>12}", "iteration", "f", "|grad f|");
    while iteration < MAX_ITERATIONS && dot(&gradient, &gradient).sqrt() > GRADIENT_TOLERANCE {
        if iteration % REPORT_EVERY == 0 {
            let norm = dot(&gradient, &gradient).sqrt();
            println!("{iteration:>9} {value:>14.6e} {norm:>12.3e}");
        }
        let mut direction = search_direction(&gradient, &history);
        let mut slope = dot(&gradient, &direction);
        if slope >= 0.0 {
            // Not a descent direction (curvature information gone stale): restart.
            history.clear();
            direction = gradient.iter().map(|g| -g).collect();
            slope = dot(&gradient, &direction);
        }
        // Backtracking line search with the Armijo condition f(x + t d) ≤ f(x) + c t ∇f·d.
        let mut step = 1.0;
        let (next_x, next_value, next_gradient) = loop {
            let trial: Vec<f64> = x
                .iter()
                .zip(&direction)
                .map(|(x, d)| x + step * d)
                .collect();
            let (trial_value, trial_gradient) = rosenbrock_grad(&trial);
            evaluations += 1;
            if trial_value <= value + 1e-4 * step * slope || step < 1e-20 {
                break (trial, trial_value, trial_gradient);
            }
            step *= 0.5;
        };
        let s: Vec<f64> = next_x.iter().zip(&x).map(|(a, b)| a - b).collect();
        let y: Vec<f64> = next_gradient
            .iter()
            .zip(&gradient)
            .map(|(a, b)| a - b)
            .collect();
        // Keep the pair only if it has positive curvature, so H stays positive definite.
        if dot(&s, &y) > 1e-12 * dot(&y, &y).sqrt() * dot(&s, &s).sqrt() {
            if history.len() == HISTORY {
                history.pop_front();
            }
            history.push_back((s, y));
        }
        (x, value, gradient) = (next_x, next_value, next_gradient);
        iteration += 1;
    }
    let norm = dot(&gradient, &gradient).sqrt();
    let distance = x.iter().map(|xi| (xi - 1.0).powi(2)).sum::<f64>().sqrt();
    println!("{iteration:>9} {value:>14.6e} {norm:>12.3e}");
    println!();
    println!(
        "{iteration} iterations, {evaluations} evaluations of rosenbrock_grad, {:.3} s",
        started.elapsed().as_secs_f64()
    );
    println!("distance to the optimum (1, …, 1): {distance:.3e}");
    if distance < 1e-6 {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: did not reach the optimum");
        ExitCode::FAILURE
    }
}

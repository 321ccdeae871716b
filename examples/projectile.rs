//! Differentiates through a simulation loop: a ball launched at 30 m/s flies under gravity and
//! quadratic air drag, integrated with the classical Runge–Kutta method (RK4). From 15 observed,
//! noisy positions, L-BFGS (argmin) recovers the launch angle and the drag coefficient, with the
//! gradient of the misfit taken through all the RK4 steps by `#[reverse_diff]`.
//!
//! Run it with `cargo run --release --example projectile`.

#[path = "common/random.rs"]
mod random;

use ad::reverse_diff;
use argmin::core::{CostFunction, Error, Executor, Gradient, State};
use argmin::solver::linesearch::condition::ArmijoCondition;
use argmin::solver::linesearch::BacktrackingLineSearch;
use argmin::solver::quasinewton::LBFGS;
use random::uniform_numbers;
use std::process::ExitCode;

/// Launch speed in m/s.
const SPEED: f64 = 30.0;
/// Gravity in m/s².
const GRAVITY: f64 = 9.81;
/// The ball is observed every `OBSERVATION_INTERVAL` seconds, `OBSERVATIONS` times.
const OBSERVATION_INTERVAL: f64 = 0.2;
const OBSERVATIONS: usize = 15;
/// RK4 steps between two observations (a step of 10 ms).
const STEPS_PER_INTERVAL: usize = 20;
/// The parameters that generate the observations: launch angle (rad) and drag coefficient
/// `k` (1/m, the drag acceleration is `k |v| v`).
const TRUE_ANGLE: f64 = 0.9;
const TRUE_DRAG: f64 = 0.01;
/// The observation noise: uniform in ± this many metres on each coordinate.
const NOISE: f64 = 0.05;
/// The fit passes when it is this close to the true parameters.
const ANGLE_TOLERANCE: f64 = 0.002;
const DRAG_TOLERANCE: f64 = 0.0002;

/// The positions `(x, y)` of the ball at the observation times, launched from the origin at
/// `angle` with drag coefficient `drag`: RK4 on the state `(x, y, vx, vy)`.
#[reverse_diff]
fn simulate(angle: f64, drag: f64) -> Vec<f64> {
    let step = OBSERVATION_INTERVAL / STEPS_PER_INTERVAL as f64;
    // The right-hand side of the equations of motion.
    let rates = |state: [f64; 4]| -> [f64; 4] {
        let speed = (state[2] * state[2] + state[3] * state[3]).sqrt();
        [
            state[2],
            state[3],
            -drag * speed * state[2],
            -GRAVITY - drag * speed * state[3],
        ]
    };
    let along = |state: [f64; 4], slope: [f64; 4], fraction: f64| -> [f64; 4] {
        [
            state[0] + fraction * slope[0],
            state[1] + fraction * slope[1],
            state[2] + fraction * slope[2],
            state[3] + fraction * slope[3],
        ]
    };
    let mut state = [0.0, 0.0, SPEED * angle.cos(), SPEED * angle.sin()];
    let mut positions = Vec::with_capacity(2 * OBSERVATIONS);
    for _ in 0..OBSERVATIONS {
        for _ in 0..STEPS_PER_INTERVAL {
            let k1 = rates(state);
            let k2 = rates(along(state, k1, 0.5 * step));
            let k3 = rates(along(state, k2, 0.5 * step));
            let k4 = rates(along(state, k3, step));
            for i in 0..4 {
                state[i] += step / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
            }
        }
        positions.push(state[0]);
        positions.push(state[1]);
    }
    positions
}

/// The sum of squared distances between the simulated and the observed positions.
#[reverse_diff]
fn misfit(angle: f64, drag: f64, #[no_grad] observed: &[f64]) -> f64 {
    let simulated = simulate(angle, drag);
    let mut total = 0.0;
    for (s, o) in simulated.iter().zip(observed) {
        total += (*s - *o) * (*s - *o);
    }
    total
}

/// The fitting problem as argmin sees it: parameters `[angle, drag]`.
struct Fit {
    observed: Vec<f64>,
}

impl CostFunction for Fit {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, p: &Vec<f64>) -> Result<f64, Error> {
        Ok(misfit(p[0], p[1], &self.observed))
    }
}

impl Gradient for Fit {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;

    fn gradient(&self, p: &Vec<f64>) -> Result<Vec<f64>, Error> {
        let (_value, (d_angle, d_drag)) = misfit_grad(p[0], p[1], &self.observed);
        Ok(vec![d_angle, d_drag])
    }
}

fn main() -> Result<ExitCode, Error> {
    let mut uniform = uniform_numbers(7);
    let observed: Vec<f64> = simulate(TRUE_ANGLE, TRUE_DRAG)
        .iter()
        .map(|position| position + NOISE * uniform())
        .collect();
    println!(
        "{OBSERVATIONS} observed positions, the last at ({:.1} m, {:.1} m)",
        observed[2 * OBSERVATIONS - 2],
        observed[2 * OBSERVATIONS - 1]
    );

    // The first guess: 45°, no drag. Check the gradient there against central differences.
    let guess = [std::f64::consts::FRAC_PI_4, 0.0];
    let (_value, (d_angle, d_drag)) = misfit_grad(guess[0], guess[1], &observed);
    let h = 1e-6;
    let central_angle = (misfit(guess[0] + h, guess[1], &observed)
        - misfit(guess[0] - h, guess[1], &observed))
        / (2.0 * h);
    let central_drag = (misfit(guess[0], guess[1] + h, &observed)
        - misfit(guess[0], guess[1] - h, &observed))
        / (2.0 * h);
    let relative_error = ((d_angle - central_angle).abs() / central_angle.abs())
        .max((d_drag - central_drag).abs() / central_drag.abs());
    println!(
        "gradient at the first guess: ({d_angle:.6e}, {d_drag:.6e}); central differences: \
         ({central_angle:.6e}, {central_drag:.6e}); relative difference {relative_error:.1e}"
    );

    // Backtracking (Armijo) rather than Moré–Thuente: the first trial steps overshoot into
    // absurd drag values, and backtracking simply halves the step until the misfit decreases.
    let line_search = BacktrackingLineSearch::new(ArmijoCondition::new(1e-4)?);
    let solver = LBFGS::new(line_search, 5)
        .with_tolerance_grad(1e-9)?
        .with_tolerance_cost(1e-15)?;
    let result = Executor::new(Fit { observed }, solver)
        .configure(|state| state.param(guess.to_vec()).max_iters(200))
        .run()?;
    let state = result.state();
    let fitted = state.get_best_param().expect("L-BFGS keeps its best point");
    println!(
        "L-BFGS: {} iterations, {}, misfit {:.4} m²",
        state.get_iter(),
        state.get_termination_status(),
        state.get_best_cost()
    );
    println!("              fitted     true");
    println!("angle (rad) {:>8.5} {TRUE_ANGLE:>8.5}", fitted[0]);
    println!("drag (1/m)  {:>8.5} {TRUE_DRAG:>8.5}", fitted[1]);

    if relative_error > 1e-6 {
        eprintln!("error: the gradient differs from central differences");
        return Ok(ExitCode::FAILURE);
    }
    if (fitted[0] - TRUE_ANGLE).abs() > ANGLE_TOLERANCE
        || (fitted[1] - TRUE_DRAG).abs() > DRAG_TOLERANCE
    {
        eprintln!(
            "error: the fit is off by more than {ANGLE_TOLERANCE} rad or {DRAG_TOLERANCE} 1/m"
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

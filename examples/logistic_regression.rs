//! Fits a logistic regression that tells red wines rated 6 or more out of 10 from the others,
//! on the UCI wine-quality data set (1 599 Portuguese "Vinho Verde" reds, 11 physico-chemical
//! measurements each; `data/datasets/`, from the `linfa-datasets` crate). argmin's L-BFGS minimises the
//! regularised negative log-likelihood, with the gradient from `#[reverse_diff]`.
//!
//! Run it with `cargo run --release --example logistic_regression`.

#[path = "common/csv.rs"]
mod csv;

use ad::reverse_diff;
use argmin::core::{CostFunction, Error, Executor, Gradient, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use csv::{parse_csv, standardise};
use std::process::ExitCode;

/// A wine counts as good (label 1) from this quality score on.
const GOOD_QUALITY: f64 = 6.0;
/// Every `TEST_EVERY`-th sample is held out for testing; the model never sees it.
const TEST_EVERY: usize = 5;
/// Strength of the L2 penalty `λ/2 |w|²` on the weights (not the bias).
const L2_PENALTY: f64 = 1e-3;

/// The mean negative log-likelihood of a logistic model plus an L2 penalty on the weights.
///
/// `parameters` holds one weight per feature, then the bias; `features` holds the samples
/// row-major (`labels.len()` rows of `parameters.len() − 1` values) and `labels` holds 1.0
/// (good) or 0.0. For a margin `m = w·x + b`, `−ln P(y | x) = softplus(m) − y m`, with
/// `softplus(m) = ln(1 + eᵐ)` written so that it cannot overflow.
#[reverse_diff]
pub fn negative_log_likelihood(
    parameters: &[f64],
    #[no_grad] features: &[f64],
    #[no_grad] labels: &[f64],
) -> f64 {
    let feature_count = parameters.len() - 1;
    let mut total = 0.0;
    for (sample, &label) in labels.iter().enumerate() {
        let row = &features[sample * feature_count..(sample + 1) * feature_count];
        let mut margin = parameters[feature_count];
        for (weight, &x) in parameters.iter().zip(row) {
            margin += *weight * x;
        }
        let softplus = margin.max(0.0) + (-margin.abs()).exp().ln_1p();
        total += softplus - label * margin;
    }
    let mut penalty = 0.0;
    for weight in &parameters[..feature_count] {
        penalty += *weight * *weight;
    }
    total / labels.len() as f64 + 0.5 * L2_PENALTY * penalty
}

/// The logistic function `1 / (1 + e⁻ᵗ)`.
fn sigmoid(t: f64) -> f64 {
    1.0 / (1.0 + (-t).exp())
}

/// The probability that each sample of `features` is a good wine.
fn probabilities(parameters: &[f64], features: &[f64]) -> Vec<f64> {
    let feature_count = parameters.len() - 1;
    features
        .chunks(feature_count)
        .map(|row| {
            let margin: f64 = parameters[feature_count]
                + parameters.iter().zip(row).map(|(w, x)| w * x).sum::<f64>();
            sigmoid(margin)
        })
        .collect()
}

/// The textbook gradient `Xᵀ(σ(Xw + b) − y) / n + λ w`, written out by hand: an independent
/// check of `negative_log_likelihood_grad`.
fn analytic_gradient(parameters: &[f64], features: &[f64], labels: &[f64]) -> Vec<f64> {
    let feature_count = parameters.len() - 1;
    let mut gradient = vec![0.0; parameters.len()];
    let probabilities = probabilities(parameters, features);
    for ((row, probability), label) in features
        .chunks(feature_count)
        .zip(probabilities)
        .zip(labels)
    {
        let error = (probability - label) / labels.len() as f64;
        for (g, x) in gradient.iter_mut().zip(row) {
            *g += error * x;
        }
        gradient[feature_count] += error;
    }
    for (g, w) in gradient.iter_mut().zip(&parameters[..feature_count]) {
        *g += L2_PENALTY * w;
    }
    gradient
}

/// The fraction of samples whose predicted class (probability ≥ 1/2) is the label.
fn accuracy(parameters: &[f64], features: &[f64], labels: &[f64]) -> f64 {
    let correct = probabilities(parameters, features)
        .iter()
        .zip(labels)
        .filter(|(probability, &label)| (**probability >= 0.5) == (label == 1.0))
        .count();
    correct as f64 / labels.len() as f64
}

/// The training data as argmin sees it.
struct Training {
    features: Vec<f64>,
    labels: Vec<f64>,
}

impl CostFunction for Training {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, parameters: &Vec<f64>) -> Result<f64, Error> {
        Ok(negative_log_likelihood(
            parameters,
            &self.features,
            &self.labels,
        ))
    }
}

impl Gradient for Training {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;

    fn gradient(&self, parameters: &Vec<f64>) -> Result<Vec<f64>, Error> {
        let (_value, gradient) =
            negative_log_likelihood_grad(parameters, &self.features, &self.labels);
        Ok(gradient)
    }
}

/// Samples split into a training and a test set.
struct Split {
    train: Training,
    test_features: Vec<f64>,
    test_labels: Vec<f64>,
    feature_names: Vec<String>,
}

/// Loads `data/datasets/winequality-red.csv`, labels the wines, holds out every
/// `TEST_EVERY`-th one and standardises the features.
fn load_wine_quality() -> Result<Split, String> {
    let table = parse_csv(include_str!("../data/datasets/winequality-red.csv"))?;
    let feature_count = table.columns.len() - 1; // the last column is the quality
    let (mut train_features, mut train_labels) = (Vec::new(), Vec::new());
    let (mut test_features, mut test_labels) = (Vec::new(), Vec::new());
    for (sample, row) in table.rows.iter().enumerate() {
        let label = if row[feature_count] >= GOOD_QUALITY {
            1.0
        } else {
            0.0
        };
        let (features, labels) = if sample % TEST_EVERY == 0 {
            (&mut test_features, &mut test_labels)
        } else {
            (&mut train_features, &mut train_labels)
        };
        features.extend_from_slice(&row[..feature_count]);
        labels.push(label);
    }
    standardise(&mut train_features, &mut test_features, feature_count);
    Ok(Split {
        train: Training {
            features: train_features,
            labels: train_labels,
        },
        test_features,
        test_labels,
        feature_names: table.columns[..feature_count].to_vec(),
    })
}

fn main() -> Result<ExitCode, Error> {
    let split = load_wine_quality().map_err(Error::msg)?;
    let feature_count = split.feature_names.len();
    let good = split.train.labels.iter().filter(|&&y| y == 1.0).count();
    println!(
        "wine quality (red): {} training and {} test samples, {feature_count} features, \
         {good} rated 6 or more in the training set",
        split.train.labels.len(),
        split.test_labels.len()
    );

    // Check the generated gradient once against the hand-written one.
    let start = vec![0.1; feature_count + 1];
    let (_value, generated) =
        negative_log_likelihood_grad(&start, &split.train.features, &split.train.labels);
    let by_hand = analytic_gradient(&start, &split.train.features, &split.train.labels);
    let gradient_error = generated
        .iter()
        .zip(&by_hand)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    println!("largest difference from the hand-written gradient: {gradient_error:.1e}");

    let line_search = MoreThuenteLineSearch::new().with_c(1e-4, 0.9)?;
    let solver = LBFGS::new(line_search, 10).with_tolerance_grad(1e-8)?;
    let result = Executor::new(split.train, solver)
        .configure(|state| state.param(start).max_iters(500))
        .run()?;
    let state = result.state();
    let parameters = state.get_best_param().expect("L-BFGS keeps its best point");
    let training = &result
        .problem
        .problem
        .as_ref()
        .expect("argmin returns the problem");
    println!(
        "L-BFGS: {} iterations, {}, final loss {:.5}",
        state.get_iter(),
        state.get_termination_status(),
        state.get_best_cost()
    );

    println!("\nweights on the standardised features:");
    let mut order: Vec<usize> = (0..feature_count).collect();
    order.sort_by(|&a, &b| parameters[b].abs().total_cmp(&parameters[a].abs()));
    for k in order {
        println!("  {:>22} {:+.3}", split.feature_names[k], parameters[k]);
    }
    println!("  {:>22} {:+.3}", "bias", parameters[feature_count]);

    let train_accuracy = accuracy(parameters, &training.features, &training.labels);
    let test_accuracy = accuracy(parameters, &split.test_features, &split.test_labels);
    let test_good = split.test_labels.iter().filter(|&&y| y == 1.0).count();
    let good_fraction = test_good as f64 / split.test_labels.len() as f64;
    let majority = good_fraction.max(1.0 - good_fraction);
    println!(
        "\naccuracy on the training set: {:.1} %",
        100.0 * train_accuracy
    );
    println!(
        "accuracy on the test set:     {:.1} %",
        100.0 * test_accuracy
    );
    println!(
        "(always answering the majority class scores {:.1} % on the test set)",
        100.0 * majority
    );

    if gradient_error > 1e-12 {
        eprintln!("error: the generated gradient differs from the hand-written one");
        return Ok(ExitCode::FAILURE);
    }
    if test_accuracy <= majority {
        eprintln!("error: the model does no better than the majority class");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

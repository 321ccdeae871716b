//! Trains a small multilayer perceptron (4 inputs, 10 tanh units, 3 softmax outputs) to tell the
//! three iris species apart from Fisher's four flower measurements, with Adam on the exact
//! gradient `#[reverse_diff]` generates. Shows a progress bar while it trains, writes the loss
//! curve to a PNG and prints its path.
//!
//! Run it with `cargo run --release --example mlp [PATH.png]`.

#[path = "common/csv.rs"]
mod csv;

#[path = "common/random.rs"]
mod random;

use ad::reverse_diff;
use csv::{parse_csv, standardise};
use indicatif::{ProgressBar, ProgressStyle};
use plotters::prelude::*;
use random::uniform_numbers;
use std::error::Error;
use std::path::PathBuf;
use std::process::ExitCode;

/// Measurements per flower.
const INPUTS: usize = 4;
/// Hidden tanh units.
const HIDDEN: usize = 10;
/// Species.
const CLASSES: usize = 3;
/// Where the parameters sit in the flat vector: hidden weights (`HIDDEN × INPUTS`), hidden
/// biases, output weights (`CLASSES × HIDDEN`), output biases.
const HIDDEN_BIASES: usize = HIDDEN * INPUTS;
const OUTPUT_WEIGHTS: usize = HIDDEN_BIASES + HIDDEN;
const OUTPUT_BIASES: usize = OUTPUT_WEIGHTS + CLASSES * HIDDEN;
const PARAMETERS: usize = OUTPUT_BIASES + CLASSES;
/// Every `TEST_EVERY`-th flower is held out (10 of each species).
const TEST_EVERY: usize = 5;
/// Full-batch Adam steps (past about 1 500 the network starts to overfit the training set).
const EPOCHS: usize = 800;
/// Adam's step size.
const LEARNING_RATE: f64 = 0.01;
/// The run fails if fewer test flowers than this are classified correctly.
const REQUIRED_TEST_ACCURACY: f64 = 0.9;

/// The class scores (logits) of one flower `x` under the network `parameters`.
#[reverse_diff]
fn logits(parameters: &[f64], #[no_grad] x: &[f64]) -> Vec<f64> {
    let mut hidden = Vec::with_capacity(HIDDEN);
    for unit in 0..HIDDEN {
        let mut activation = parameters[HIDDEN_BIASES + unit];
        for (k, &input) in x.iter().enumerate() {
            activation += parameters[unit * INPUTS + k] * input;
        }
        hidden.push(activation.tanh());
    }
    let mut scores = Vec::with_capacity(CLASSES);
    for class in 0..CLASSES {
        let mut score = parameters[OUTPUT_BIASES + class];
        for (unit, &h) in hidden.iter().enumerate() {
            score += parameters[OUTPUT_WEIGHTS + class * HIDDEN + unit] * h;
        }
        scores.push(score);
    }
    scores
}

/// The mean cross-entropy `−ln softmax(logits)[label]` over the flowers in `features`
/// (row-major, `INPUTS` per flower) with species `labels`.
#[reverse_diff]
fn cross_entropy(parameters: &[f64], #[no_grad] features: &[f64], labels: &[usize]) -> f64 {
    let mut total = 0.0;
    for (sample, &label) in labels.iter().enumerate() {
        let scores = logits(
            parameters,
            &features[sample * INPUTS..(sample + 1) * INPUTS],
        );
        // log-sum-exp, shifted by the largest score so that exp cannot overflow
        let mut largest = scores[0];
        for &score in &scores[1..] {
            largest = largest.max(score);
        }
        let mut sum = 0.0;
        for &score in &scores {
            sum += (score - largest).exp();
        }
        total += largest + sum.ln() - scores[label];
    }
    total / labels.len() as f64
}

/// The fraction of flowers whose largest logit is their species.
fn accuracy(parameters: &[f64], features: &[f64], labels: &[usize]) -> f64 {
    let correct = features
        .chunks(INPUTS)
        .zip(labels)
        .filter(|(x, &label)| {
            let scores = logits(parameters, x);
            (0..CLASSES).all(|class| scores[class] <= scores[label])
        })
        .count();
    correct as f64 / labels.len() as f64
}

/// Adam (Kingma & Ba, 2015) with the usual β₁ = 0.9, β₂ = 0.999.
struct Adam {
    first_moment: Vec<f64>,
    second_moment: Vec<f64>,
    steps: i32,
}

impl Adam {
    fn new(parameters: usize) -> Self {
        Adam {
            first_moment: vec![0.0; parameters],
            second_moment: vec![0.0; parameters],
            steps: 0,
        }
    }

    /// Moves `parameters` one step against `gradient`.
    fn step(&mut self, parameters: &mut [f64], gradient: &[f64]) {
        let (beta1, beta2): (f64, f64) = (0.9, 0.999);
        self.steps += 1;
        let correction1 = 1.0 - beta1.powi(self.steps);
        let correction2 = 1.0 - beta2.powi(self.steps);
        for (((p, g), m), v) in parameters
            .iter_mut()
            .zip(gradient)
            .zip(&mut self.first_moment)
            .zip(&mut self.second_moment)
        {
            *m = beta1 * *m + (1.0 - beta1) * g;
            *v = beta2 * *v + (1.0 - beta2) * g * g;
            *p -= LEARNING_RATE * (*m / correction1) / ((*v / correction2).sqrt() + 1e-8);
        }
    }
}

/// Draws the training and test loss per epoch, on a logarithmic axis, into a PNG at `path`.
fn plot_losses(path: &PathBuf, train: &[f64], test: &[f64]) -> Result<(), Box<dyn Error>> {
    // The text is drawn with the DejaVu font compiled in, not a system font.
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "the bundled DejaVu font could not be read")?;
    let root = BitMapBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let lowest = train
        .iter()
        .chain(test)
        .copied()
        .fold(f64::INFINITY, f64::min);
    let highest = train.iter().chain(test).copied().fold(0.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption("MLP on the iris flowers: cross-entropy", ("sans-serif", 24))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0..train.len(), (lowest * 0.8..highest * 1.2).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("epoch")
        .y_desc("loss")
        // Log-axis ticks such as 0.7000000000000001 print as 0.7.
        .y_label_formatter(&|loss| {
            format!("{loss:.3}")
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string()
        })
        .draw()?;
    chart
        .draw_series(LineSeries::new(train.iter().copied().enumerate(), &BLUE))?
        .label("training set (120 flowers)")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLUE));
    chart
        .draw_series(LineSeries::new(test.iter().copied().enumerate(), &RED))?
        .label("test set (30 flowers)")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], RED));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn main() -> Result<ExitCode, Box<dyn Error>> {
    let plot_path = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("ad_mlp_loss.png"));

    let table = parse_csv(include_str!("../data/datasets/iris.csv"))?;
    let (mut train_features, mut train_labels) = (Vec::new(), Vec::new());
    let (mut test_features, mut test_labels) = (Vec::new(), Vec::new());
    for (sample, row) in table.rows.iter().enumerate() {
        let (features, labels) = if sample % TEST_EVERY == 0 {
            (&mut test_features, &mut test_labels)
        } else {
            (&mut train_features, &mut train_labels)
        };
        features.extend_from_slice(&row[..INPUTS]);
        labels.push(row[INPUTS] as usize);
    }
    standardise(&mut train_features, &mut test_features, INPUTS);
    println!(
        "iris: {} training and {} test flowers; inputs {}",
        train_labels.len(),
        test_labels.len(),
        table.columns[..INPUTS].join(", ")
    );

    let mut uniform = uniform_numbers(2024);
    let mut parameters: Vec<f64> = (0..PARAMETERS).map(|_| 0.5 * uniform()).collect();
    let mut adam = Adam::new(PARAMETERS);
    let (mut train_losses, mut test_losses) = (Vec::new(), Vec::new());

    let progress = ProgressBar::new(EPOCHS as u64);
    progress.set_style(ProgressStyle::with_template(
        "{bar:40} {pos}/{len} epochs, {elapsed_precise} {msg}",
    )?);
    for _ in 0..EPOCHS {
        let (loss, gradient) = cross_entropy_grad(&parameters, &train_features, &train_labels);
        adam.step(&mut parameters, &gradient);
        train_losses.push(loss);
        test_losses.push(cross_entropy(&parameters, &test_features, &test_labels));
        progress.set_message(format!("training loss {loss:.4}"));
        progress.inc(1);
    }
    progress.finish();

    let train_accuracy = accuracy(&parameters, &train_features, &train_labels);
    let test_accuracy = accuracy(&parameters, &test_features, &test_labels);
    println!(
        "{PARAMETERS} parameters; final cross-entropy: training {:.4}, test {:.4}",
        train_losses[EPOCHS - 1],
        test_losses[EPOCHS - 1]
    );
    println!(
        "accuracy on the training set: {:.1} %",
        100.0 * train_accuracy
    );
    println!(
        "accuracy on the test set:     {:.1} %",
        100.0 * test_accuracy
    );
    plot_losses(&plot_path, &train_losses, &test_losses)?;
    println!("loss curve written to {}", plot_path.display());

    if test_accuracy < REQUIRED_TEST_ACCURACY {
        eprintln!("error: test accuracy below {REQUIRED_TEST_ACCURACY}");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

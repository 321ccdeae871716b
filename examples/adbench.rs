//! ADBench's GMM, BA and LSTM objectives (module `tests/adbench/`), each timed as a plain `f64`
//! call and with its derivative from `#[reverse_diff]`: the gradient for GMM and LSTM, the full
//! sparse Jacobian for BA. Prints the value, the two median times and their ratio, beside the
//! ratios gradbench publishes for other tools (medians on their machine).
//!
//! Before timing, each derivative is checked against a central difference along a random
//! direction (and GMM d=2, K=5 against ADBench's value); the example exits non-zero if one is
//! off.
//!
//! Run it with `cargo run --release --example adbench`; add a word (`gmm`, `ba`, `lstm`) to run
//! only the objectives whose name contains it: `cargo run --release --example adbench -- lstm`.
//! A run of every objective also writes the table as markdown to `target/adbench.md`
//! (`$CARGO_TARGET_DIR` if set), which `cargo run --release -p ad-reports --bin bench_report` puts in
//! BENCHMARKS.md.

#[path = "../tests/adbench/mod.rs"]
mod adbench;

use adbench::{ba, directional_derivatives, gmm, load, lstm, SplitMix64};
use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Each measurement repeats its call at least this many times …
const MIN_RUNS: usize = 3;
/// … and until this much time has passed (or `MAX_RUNS` calls), then takes the median.
const MIN_TOTAL: Duration = Duration::from_millis(800);
/// The most calls per measurement.
const MAX_RUNS: usize = 1000;

/// The step and the relative tolerance of the check along a random direction.
const STEP: f64 = 1e-6;
const TOLERANCE: f64 = 1e-6;

/// The median time of `call`, after one call to warm up.
fn median_time<T>(mut call: impl FnMut() -> T) -> Duration {
    black_box(call());
    let mut times = Vec::new();
    let started = Instant::now();
    while times.len() < MIN_RUNS || (started.elapsed() < MIN_TOTAL && times.len() < MAX_RUNS) {
        let start = Instant::now();
        black_box(call());
        times.push(start.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

/// A duration in the unit that suits it.
fn format_duration(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds >= 1.0 {
        format!("{seconds:.2} s")
    } else if seconds >= 1e-3 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{:.1} µs", seconds * 1e6)
    }
}

/// One line of the table.
struct Row {
    name: &'static str,
    value: String,
    objective: Duration,
    derivative: Duration,
    published: &'static str,
}

impl Row {
    fn ratio(&self) -> f64 {
        self.derivative.as_secs_f64() / self.objective.as_secs_f64()
    }
}

/// Checks a gradient along one random direction (JAX's `check_grads`), printing the outcome.
fn check_gradient(name: &str, f: impl Fn(&[f64]) -> f64, x: &[f64], gradient: &[f64]) -> bool {
    let direction = SplitMix64::new(1).direction(x.len());
    let (predicted, central) = directional_derivatives(f, x, gradient, &direction, STEP);
    let good = (predicted - central).abs() <= TOLERANCE * central.abs().max(1.0);
    if !good {
        eprintln!("{name}: <grad, u> = {predicted}, central difference {central}: WRONG");
    }
    good
}

/// Times GMM on an instance.
fn gmm_row(
    name: &'static str,
    input: &gmm::GmmInput,
    published: &'static str,
    good: &mut bool,
) -> Row {
    let (value, gradient) = input.objective_and_gradient();
    *good &= gradient.len() == input.parameter_count();
    *good &= check_gradient(
        name,
        |parameters| input.objective_at_parameters(parameters),
        &input.parameters(),
        &gradient,
    );
    Row {
        name,
        value: format!("{value:.6}"),
        objective: median_time(|| input.objective()),
        derivative: median_time(|| input.objective_and_gradient()),
        published,
    }
}

/// The table as a markdown section, for BENCHMARKS.md.
fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "## ADBench\n\nFrom `cargo run --release --example adbench` (medians of repeated calls, \
         each derivative checked first against a central difference along a random direction). \
         The derivative is the value and gradient (GMM, LSTM) or the full sparse Jacobian (BA); \
         the published ratios are gradbench's medians on its own machine.\n\n\
         | objective | value | objective | derivative | ratio | published ratios (gradbench) |\n\
         | --- | ---: | ---: | ---: | ---: | --- |\n",
    );
    for row in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {:.1}× | {} |\n",
            row.name,
            row.value,
            format_duration(row.objective),
            format_duration(row.derivative),
            row.ratio(),
            row.published
        ));
    }
    out
}

fn main() -> ExitCode {
    let filter = std::env::args().nth(1).unwrap_or_default().to_lowercase();
    let selected = |name: &str| name.to_lowercase().contains(&filter);
    let mut good = true;
    let mut rows = Vec::new();

    if selected("gmm") {
        let gmm_d2_k5 = load("gmm/1k/gmm_d2_K5.txt", gmm::read_gmm);
        let value = gmm_d2_k5.objective();
        if (value - -5240.59).abs() > 0.005 {
            eprintln!("GMM d=2 K=5: F = {value}, ADBench's value is -5240.59: WRONG");
            good = false;
        }
        rows.push(gmm_row(
            "GMM d=2 K=5 n=1000",
            &gmm_d2_k5,
            "manual 1.8, JAX 2.3, Tapenade 3.8, Enzyme 4.7, CoDiPack 4.8, Adept 14",
            &mut good,
        ));
        rows.push(gmm_row(
            "GMM d=10 K=25 n=1000",
            &gmm::generate_gmm(10, 25, 1000, 10_25),
            "manual 1.8, Tapenade 2.5, JAX 4.1, CoDiPack 9.8, Enzyme 12.8",
            &mut good,
        ));
        rows.push(gmm_row(
            "GMM d=64 K=10 n=1000",
            &gmm::generate_gmm(64, 10, 1000, 64_10),
            "(none published)",
            &mut good,
        ));
    }

    if selected("ba") {
        let ba1 = load("ba/ba1_n49_m7776_p31843.txt", ba::read_ba);
        let residuals = |input: &ba::BaInput| {
            let (reprojection, weights) = ba::ba_objective(input);
            [reprojection, weights].concat()
        };
        let jacobian = ba::ba_jacobian(&ba1);
        good &= jacobian.rows == 3 * ba1.p && jacobian.columns == ba1.unknowns();
        // The whole Jacobian along one random direction: J u against central differences of every
        // residual.
        let direction = SplitMix64::new(1).direction(ba1.unknowns());
        let above = residuals(&ba1.moved(&direction, STEP));
        let below = residuals(&ba1.moved(&direction, -STEP));
        for (row, (got, (a, b))) in jacobian
            .multiply(&direction)
            .iter()
            .zip(above.iter().zip(&below))
            .enumerate()
        {
            let central = (a - b) / (2.0 * STEP);
            if (got - central).abs() > TOLERANCE * central.abs().max(1.0) {
                eprintln!("BA row {row}: (J u) = {got}, central difference {central}: WRONG");
                good = false;
                break;
            }
        }
        let squared_norm: f64 = residuals(&ba1).iter().map(|r| r * r).sum();
        // Each run computes into the same outputs, as ADBench's and gradbench's C++ harnesses
        // do: the Jacobian's 16 MB allocated afresh would be mapped again every run.
        let mut kept_residuals = (Vec::new(), Vec::new());
        let mut kept_jacobian = ba::CsrMatrix::new();
        rows.push(Row {
            name: "BA ba1 (n=49 m=7776 p=31843)",
            value: format!("|r|² = {squared_norm:.6e}"),
            objective: median_time(|| ba::ba_objective_into(&ba1, &mut kept_residuals)),
            derivative: median_time(|| ba::ba_jacobian_into(&ba1, &mut kept_jacobian)),
            published: "manual 7.2, Enzyme 9.1, Tapenade 13.7, CoDiPack 20",
        });
    }

    if selected("lstm") {
        let lstm = load("lstm/lstm_l2_c1024.txt", lstm::read_lstm);
        let (value, gradient) = lstm.objective_and_gradient();
        good &= gradient.len() == 266;
        good &= check_gradient(
            "LSTM",
            |parameters| lstm.objective_at_parameters(parameters),
            &lstm.parameters(),
            &gradient,
        );
        rows.push(Row {
            name: "LSTM l=2 c=1024",
            value: format!("{value:.6}"),
            objective: median_time(|| lstm.objective()),
            derivative: median_time(|| lstm.objective_and_gradient()),
            published: "CoDiPack 2.2, Enzyme 2.8, Tapenade 3.2, Adept 4.4, manual 5.4",
        });
    }

    println!(
        "{:<29} {:>22} {:>10} {:>11} {:>6}  published ratios (gradbench)",
        "objective", "value", "objective", "derivative", "ratio"
    );
    for row in &rows {
        println!(
            "{:<29} {:>22} {:>10} {:>11} {:>6.1}  {}",
            row.name,
            row.value,
            format_duration(row.objective),
            format_duration(row.derivative),
            row.ratio(),
            row.published
        );
    }
    println!(
        "\nratio = derivative / objective (medians); the derivative is the value and gradient \
         (GMM, LSTM) or the full sparse Jacobian (BA)."
    );
    if good && filter.is_empty() {
        let target = std::env::var_os("CARGO_TARGET_DIR").unwrap_or_else(|| "target".into());
        let path = std::path::PathBuf::from(target).join("adbench.md");
        match std::fs::write(&path, markdown(&rows)) {
            Ok(()) => println!("wrote {}", path.display()),
            Err(error) => {
                eprintln!("cannot write {}: {error}", path.display());
                return ExitCode::FAILURE;
            }
        }
    }
    if good {
        ExitCode::SUCCESS
    } else {
        eprintln!("some derivative disagreed with its check");
        ExitCode::FAILURE
    }
}

//! Linear scaling and memory of the gradient: for the sharing chain and extended
//! Rosenbrock of the benchmark suite, from 10³ to 10⁷ primal operations, the median time of the
//! primal and of the gradient on the tape, the tape's node count, and the peak heap bytes of a
//! gradient call; then `rosenbrock_grad` at n = 10⁶, and one chain of 10⁸ operations. The chain
//! has one input, so its `chain_grad` runs in forward mode with no tape (the benchmark suite
//! times it); this table times `chain_vjp` with the cotangent 1, which records the chain and
//! sweeps it, to show how the tape scales. Every gradient is checked
//! against the analytic one first; a wrong one makes the program exit non-zero.
//!
//! ```sh
//! cargo run --release -p ad-reports --bin scaling              # prints the table, writes target/scaling.md
//! cargo run --release -p ad-reports --bin scaling -- OUT.md    # writes OUT.md
//! cargo run --release -p ad-reports --bin scaling -- --quick   # up to 10⁵ operations, no 10⁸ point,
//!                                                    # prints only (what CI runs: 2 s)
//! ```
//!
//! `target` is `$CARGO_TARGET_DIR` if set. `cargo run --release -p ad-reports --bin bench_report` puts the
//! table into `BENCHMARKS.md`. About 30 s in release on 2 cores, and about 5 GB of heap at the
//! 10⁸ point.
//!
//! Heap bytes come from a counting global allocator: the peak, during one call, of the bytes
//! held above what was held before it, measured on a new thread so that the call starts from an
//! empty tape (a first call, the most it needs; warm calls reuse the buffers). A reallocation
//! counts at its new size only (no copy counted twice). These are allocated bytes: capacity the
//! tape never writes is not resident, so resident memory can be lower (`tests/huge_tape.rs`
//! reports resident memory). Times are medians over repetitions of
//! warm calls, shown, never asserted.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use ad::{reverse_diff, Tape, Var};

#[path = "../peak_heap.rs"]
mod peak_heap;
#[path = "../units.rs"]
mod units;

use peak_heap::peak_heap_on_new_thread;
use units::{format_time, three_digits, with_unit};

// --- the functions (as in benches/suite/annotated.rs) --------------------------------------------

/// `x ← x + x·c`, `n` times (`x` is read twice per step): value `x₀ (1 + c)ⁿ`, derivative
/// `(1 + c)ⁿ`. Two primal operations per step.
#[reverse_diff]
fn chain(x: f64, n: usize, #[no_grad] c: f64) -> f64 {
    let mut x = x;
    for _ in 0..n {
        x = x + x * c;
    }
    x
}

/// The extended Rosenbrock function `Σ_{i=0}^{n−2} 100 (x_{i+1} − x_i²)² + (1 − x_i)²`. Eight
/// primal operations per term: `x_i²`, `−`, `1 − x_i`, `d²`, `100·`, `e²`, `+`, `+=`.
#[reverse_diff]
fn rosenbrock(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() - 1 {
        let d = x[i + 1] - x[i] * x[i];
        let e = 1.0 - x[i];
        total += 100.0 * (d * d) + e * e;
    }
    total
}

/// The chain's factor, the suite's: `(1 + c)ⁿ` is at most e⁵⁰ ≈ 5·10²¹ at 5·10⁷ steps.
const CHAIN_FACTOR: f64 = 1e-6;
const CHAIN_START: f64 = 0.75;
const CHAIN_OPS_PER_STEP: usize = 2;
const ROSENBROCK_OPS_PER_TERM: usize = 8;

/// Rosenbrock's standard start: −1.2 at even indices, 1.0 at odd ones.
fn rosenbrock_inputs(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
        .collect()
}

/// `∂/∂x_i` of Rosenbrock: `−400 x_i (x_{i+1} − x_i²) − 2 (1 − x_i)` from term i, plus
/// `200 (x_i − x_{i−1}²)` from term i − 1.
fn rosenbrock_analytic(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let mut gradient = vec![0.0; n];
    for i in 0..n - 1 {
        let d = x[i + 1] - x[i] * x[i];
        gradient[i] += -400.0 * x[i] * d - 2.0 * (1.0 - x[i]);
        gradient[i + 1] += 200.0 * d;
    }
    gradient
}

// --- checks ----------------------------------------------------------------------------------

/// Checks the chain's value and derivative against `x₀ (1 + c)ⁿ` and `(1 + c)ⁿ`. The sweep
/// multiplies n factors, each rounding by at most ε/2 (and so does the primal): relative error
/// below n·ε.
fn check_chain(steps: usize, (value, derivative): (f64, f64)) -> Result<(), String> {
    let growth = (1.0 + CHAIN_FACTOR).powf(steps as f64);
    let tolerance = 2.0 * steps as f64 * f64::EPSILON + 1e-14;
    for (what, got, expected) in [
        ("value", value, CHAIN_START * growth),
        ("derivative", derivative, growth),
    ] {
        if ((got - expected) / expected).abs() > tolerance {
            return Err(format!(
                "chain of {steps} steps: {what} {got}, the closed form gives {expected}"
            ));
        }
    }
    Ok(())
}

/// Checks Rosenbrock's gradient against the analytic one, entry by entry, to 1e-12 of the
/// largest entry (each entry is a sum of two terms of a few roundings each).
fn check_rosenbrock(x: &[f64], gradient: &[f64]) -> Result<(), String> {
    let expected = rosenbrock_analytic(x);
    let scale = expected.iter().fold(1.0f64, |m, g| m.max(g.abs()));
    for (i, (got, want)) in gradient.iter().zip(&expected).enumerate() {
        if (got - want).abs() > 1e-12 * scale {
            return Err(format!(
                "rosenbrock n = {}: ∂/∂x{i} = {got}, the analytic gradient gives {want}",
                x.len()
            ));
        }
    }
    if gradient.len() != x.len() {
        return Err(format!("rosenbrock n = {}: gradient length", x.len()));
    }
    Ok(())
}

// --- measuring --------------------------------------------------------------------------------

/// The median of `f`'s time over repetitions: at least 3, more while the total stays under
/// `budget` (at most 10 000), after one warm-up call.
fn median_time(budget: Duration, mut f: impl FnMut()) -> Duration {
    f();
    let mut times = Vec::new();
    let started = Instant::now();
    while times.len() < 3 || (started.elapsed() < budget && times.len() < 10_000) {
        let call = Instant::now();
        f();
        times.push(call.elapsed());
    }
    times.sort_unstable();
    times[times.len() / 2]
}

/// One row of the table.
struct Row {
    function: &'static str,
    /// The size as the table prints it (`n = …`).
    size: String,
    /// Primal operations, counted from the source.
    operations: usize,
    /// Nodes the tape holds after the function, inputs included (`Tape::len`).
    nodes: usize,
    /// Median primal and gradient times; no primal time where only one gradient was timed.
    primal: Option<Duration>,
    gradient: Duration,
    /// Whether `gradient` is one warm call rather than a median.
    single: bool,
    /// Peak heap bytes of a first gradient call on a fresh thread.
    peak_heap: usize,
}

/// Nodes recorded by the chain of `steps` steps, its input included.
fn chain_nodes(steps: usize) -> usize {
    let tape = Tape::new();
    let x = tape.var(CHAIN_START);
    black_box(chain(x, steps, CHAIN_FACTOR));
    tape.len()
}

/// Nodes recorded by Rosenbrock at `x`, its inputs included.
fn rosenbrock_nodes(x: &[f64]) -> usize {
    let tape = Tape::new();
    let inputs: Vec<Var> = x.iter().map(|&value| tape.var(value)).collect();
    black_box(rosenbrock(&inputs));
    tape.len()
}

/// Measures the chain of `operations` primal operations: memory and check on a fresh thread,
/// then warm medians; if `single`, only the time of one warm call right after the first (for
/// sizes where repetitions take too long).
fn measure_chain(operations: usize, budget: Duration, single: bool) -> Result<Row, String> {
    let steps = operations / CHAIN_OPS_PER_STEP;
    let ((result, warm), peak_heap) = peak_heap_on_new_thread(move || {
        let result = chain_vjp(CHAIN_START, steps, CHAIN_FACTOR, &1.0);
        let warm = single.then(|| {
            let started = Instant::now();
            black_box(chain_vjp(black_box(CHAIN_START), steps, CHAIN_FACTOR, &1.0));
            started.elapsed()
        });
        (result, warm)
    });
    check_chain(steps, result)?;
    let nodes = std::thread::spawn(move || chain_nodes(steps))
        .join()
        .expect("counting nodes");
    let (primal, gradient) = match warm {
        Some(warm) => (None, warm),
        None => (
            Some(median_time(budget, || {
                black_box(chain::<f64>(
                    black_box(CHAIN_START),
                    black_box(steps),
                    CHAIN_FACTOR,
                ));
            })),
            median_time(budget, || {
                black_box(chain_vjp(
                    black_box(CHAIN_START),
                    black_box(steps),
                    CHAIN_FACTOR,
                    &1.0,
                ));
            }),
        ),
    };
    Ok(Row {
        function: "chain",
        size: format!("n = {steps}"),
        operations: steps * CHAIN_OPS_PER_STEP,
        nodes,
        primal,
        gradient,
        single,
        peak_heap,
    })
}

/// Measures Rosenbrock with `n` inputs, as [`measure_chain`] does.
fn measure_rosenbrock(n: usize, budget: Duration) -> Result<Row, String> {
    let x = rosenbrock_inputs(n);
    let input = x.clone();
    let ((_, gradient), peak_heap) = peak_heap_on_new_thread(move || rosenbrock_grad(&input));
    check_rosenbrock(&x, &gradient)?;
    let input = x.clone();
    let nodes = std::thread::spawn(move || rosenbrock_nodes(&input))
        .join()
        .expect("counting nodes");
    let primal = median_time(budget, || {
        black_box(rosenbrock::<f64>(black_box(&x)));
    });
    let gradient = median_time(budget, || {
        black_box(rosenbrock_grad(black_box(&x)));
    });
    Ok(Row {
        function: "rosenbrock",
        size: format!("n = {n}"),
        operations: (n - 1) * ROSENBROCK_OPS_PER_TERM,
        nodes,
        primal: Some(primal),
        gradient,
        single: false,
        peak_heap,
    })
}

// --- the table --------------------------------------------------------------------------------

/// A duration with three significant digits and a unit.
fn format_duration(duration: Duration) -> String {
    format_time(duration.as_secs_f64() * 1e9)
}

/// Bytes in kB, MB or GB (powers of 10), three significant digits.
fn format_bytes(bytes: usize) -> String {
    with_unit(bytes as f64, ["B", "kB", "MB", "GB"])
}

/// `10^k` as `10³`, or the number itself.
fn power_of_ten(value: usize) -> String {
    const SUPERSCRIPTS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut power = 0;
    let mut rest = value;
    while rest >= 10 && rest % 10 == 0 {
        rest /= 10;
        power += 1;
    }
    if rest == 1 && power > 0 {
        let digits: String = power
            .to_string()
            .chars()
            .map(|d| SUPERSCRIPTS[d.to_digit(10).expect("a digit") as usize])
            .collect();
        format!("10{digits}")
    } else {
        value.to_string()
    }
}

fn render(rows: &[Row], rosenbrock_million: &Row, huge: Option<&Row>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Scaling and memory\n");
    let _ = writeln!(
        out,
        "From `cargo run --release -p ad-reports --bin scaling` (`reports/src/bin/scaling.rs`; the same functions \
         and inputs as the suite). Primal operations are counted from the source: 2 \
         per chain step, 8 per Rosenbrock term; tape nodes are `Tape::len()` after the function \
         (inputs included). Times are medians of warm calls. Peak heap is the most heap held \
         during one first gradient call on a fresh thread (the tape's buffers grown from empty, \
         plus the returned gradient), from a counting global allocator; the buffers grow by \
         doubling, so bytes per node vary by up to 2× from size to size, and capacity never \
         written is allocated but not resident. Linear scaling shows as \
         flat ns-per-operation and bytes-per-node columns. Every gradient was checked against \
         the analytic one.\n"
    );
    let _ = writeln!(
        out,
        "| function | size | primal operations | tape nodes | primal | gradient | gradient / \
         primal | gradient ns / operation | peak heap | bytes / node |"
    );
    let _ = writeln!(out, "| --- | --- |{}", " ---: |".repeat(8));
    for row in rows.iter().chain(huge) {
        let ratio = row.primal.map_or("—".to_string(), |primal| {
            format!(
                "{}×",
                three_digits(row.gradient.as_secs_f64() / primal.as_secs_f64())
            )
        });
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {}{} | {ratio} | {} | {} | {} |",
            row.function,
            row.size,
            power_of_ten(row.operations),
            row.nodes,
            row.primal.map_or("—".to_string(), format_duration),
            format_duration(row.gradient),
            if row.single { " (one call)" } else { "" },
            three_digits(row.gradient.as_secs_f64() * 1e9 / row.operations as f64),
            format_bytes(row.peak_heap),
            three_digits(row.peak_heap as f64 / row.nodes as f64),
        );
    }
    let _ = writeln!(out);
    let row = rosenbrock_million;
    let _ = writeln!(
        out,
        "`rosenbrock_grad` at n = 10⁶: peak heap {} ({} bytes per tape node over {} nodes, of \
         which {} is the returned gradient), gradient {} against a primal of {}.",
        format_bytes(row.peak_heap),
        three_digits(row.peak_heap as f64 / row.nodes as f64),
        row.nodes,
        format_bytes(8 * 1_000_000),
        format_duration(row.gradient),
        row.primal.map_or("—".to_string(), format_duration),
    );
    match huge {
        Some(row) => {
            let _ = writeln!(
                out,
                "\nThe 10⁸-operation chain's time is one warm call (the second on its thread), not \
                 a median; its peak heap is {:.1} bytes per primal operation. `tests/huge_tape.rs` also \
                 differentiates 10⁸ operations (in release, in CI) and reports its peak \
                 resident memory.",
                row.peak_heap as f64 / row.operations as f64
            );
        }
        None => {
            let _ = writeln!(
                out,
                "\n(Run without `--quick` for the 10⁸-operation point.)"
            );
        }
    }
    out
}

fn main() -> ExitCode {
    let mut quick = false;
    let mut output = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--quick" => quick = true,
            option if option.starts_with("--") => {
                eprintln!("error: unknown option {option}\nusage: scaling [--quick] [OUT.md]");
                return ExitCode::FAILURE;
            }
            path => output = Some(PathBuf::from(path)),
        }
    }
    // A quick run writes only where it is told to, so it never replaces the full table.
    let output = output.or_else(|| {
        let target = std::env::var_os("CARGO_TARGET_DIR").unwrap_or_else(|| "target".into());
        (!quick).then(|| PathBuf::from(target).join("scaling.md"))
    });
    let largest = if quick { 100_000 } else { 10_000_000 };
    let budget = Duration::from_millis(if quick { 50 } else { 400 });

    let run = || -> Result<(Vec<Row>, Row, Option<Row>), String> {
        let mut rows = Vec::new();
        let mut operations = 1_000;
        while operations <= largest {
            rows.push(measure_chain(operations, budget, false)?);
            eprintln!("chain, {} operations: done", power_of_ten(operations));
            operations *= 10;
        }
        let mut operations = 1_000;
        while operations <= largest {
            let n = operations / ROSENBROCK_OPS_PER_TERM + 1;
            rows.push(measure_rosenbrock(n, budget)?);
            eprintln!("rosenbrock, {} operations: done", power_of_ten(operations));
            operations *= 10;
        }
        let million = measure_rosenbrock(1_000_000, budget)?;
        let huge = if quick {
            None
        } else {
            Some(measure_chain(100_000_000, budget, true)?)
        };
        Ok((rows, million, huge))
    };
    let (rows, million, huge) = match run() {
        Ok(measured) => measured,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let table = render(&rows, &million, huge.as_ref());
    println!("{table}");
    let Some(output) = output else {
        eprintln!("every gradient matched the analytic one (a quick run: no file written)");
        return ExitCode::SUCCESS;
    };
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(parent);
    }
    if let Err(error) = std::fs::write(&output, &table) {
        eprintln!("error: cannot write {}: {error}", output.display());
        return ExitCode::FAILURE;
    }
    eprintln!(
        "wrote {}; every gradient matched the analytic one",
        output.display()
    );
    ExitCode::SUCCESS
}

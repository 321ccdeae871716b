//! Turns the criterion output of the benchmark suite into `BENCHMARKS.md`: for each function and
//! size, the median time of the primal and of each tool's gradient, the ratio gradient/primal,
//! and `ad`'s speed-up over each peer, with the machine and the date, and the list of
//! (tool, function) pairs the suite leaves out, with the reason. Four optional inputs add their
//! sections when their files exist: JAX's times (`benches/jax/run.sh`), the scaling and memory
//! table (`reports/src/bin/scaling.rs`), the ADBench table (`examples/adbench.rs`), the
//! checkpointing table (`reports/src/bin/checkpointing.rs`), the Hessian table
//! (`reports/src/bin/hessians.rs`) and the gradbench table (`gradbench/run-all.sh`).
//!
//! ```sh
//! cargo bench --bench suite && cargo bench -p ad-peer-bench
//! bash benches/jax/run.sh                                  # optional: JAX's columns
//! cargo run --release -p ad-reports --bin scaling                    # optional: scaling and memory
//! cargo run --release --example adbench                    # optional: ADBench's objectives
//! cargo run --release -p ad-reports --bin checkpointing              # optional: 10⁶ RK4 steps, 80 s, 6 GB
//! cargo run --release -p ad-reports --bin hessians                   # optional: Hessians of 4 scalars
//! gradbench/run-all.sh                                     # optional: gradbench's evals
//! cargo run --release -p ad-reports --bin bench_report              # writes BENCHMARKS.md
//! cargo run --release -p ad-reports --bin bench_report -- DIR OUT   # criterion directory, output file
//! cargo run --release -p ad-reports --bin bench_report -- --jax FILE.csv --scaling FILE.md --adbench FILE.md
//!     --checkpointing FILE.md --hessians FILE.md --gradbench FILE.md
//! ```
//!
//! Criterion's directory is `$CARGO_TARGET_DIR/criterion` (or `target/criterion`) unless given.
//! The report reads each benchmark's `new/benchmark.json` (its id) and `new/estimates.json`
//! (the median's point estimate, in nanoseconds). JAX's file is `jax/results.csv` and the
//! tables `scaling.md`, `adbench.md`, `checkpointing.md`, `hessians.md` and `gradbench.md` beside
//! criterion's directory unless given.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

#[path = "../units.rs"]
mod units;

use units::{format_time, three_digits};

/// The tools in table order; "primal" is the plain `f64` function.
const TOOLS: [&str; 7] = [
    "primal", "ad", "num-dual", "autodiff", "reverse", "easy-ml", "ad_trait",
];

/// The peers, with how each computes a gradient.
const PEERS: [(&str, &str); 5] = [
    (
        "num-dual",
        "forward mode: `DualSVec64<N>` (all N derivatives in one pass) for scalar_mult, \
         rotate_vec_by_quat, Rosenbrock n = 10 and GMM; elsewhere `Dual64`, one pass per input",
    ),
    (
        "autodiff",
        "forward mode: its `grad`, one pass per input (`F1`)",
    ),
    (
        "reverse",
        "reverse mode: `Var` on a `Tape`, reused between calls (`clear`)",
    ),
    (
        "easy-ml",
        "reverse mode: `Record` on a `WengertList`, reused between calls (`clear`); `tanh` by \
         `Record::unary`",
    ),
    (
        "ad_trait",
        "reverse mode: `adr` on its thread-local computation graph (reset by the first \
         `new_variable`)",
    ),
];

/// The functions in report order, with what each computes.
const FUNCTIONS: [(&str, &str); 9] = [
    ("scalar_mult", "`x · y`"),
    ("dot", "`Σ xᵢ yᵢ`, gradient in both vectors (2n inputs)"),
    (
        "matvec_sum",
        "`Σᵢ Σⱼ aᵢⱼ xⱼ`, an n × n matrix, gradient in the matrix and the vector (n² + n inputs)",
    ),
    (
        "rotate_vec_by_quat",
        "sum of the components of `v` rotated by the quaternion `q` (examples/quaternion.rs), \
         gradient in q and v",
    ),
    (
        "rosenbrock",
        "extended Rosenbrock at the standard start, n inputs",
    ),
    (
        "mlp",
        "mean squared error of a 16–32–1 tanh perceptron over a batch of 64, gradient in all \
         577 weights",
    ),
    (
        "mlp_relu",
        "the same perceptron with ReLU hidden units (`pre.max(0.0)`)",
    ),
    (
        "chain",
        "`x ← x + x·c` repeated n times (x read twice per step), gradient in x",
    ),
    (
        "gmm",
        "ADBench's GMM objective on data/adbench/gmm/1k/gmm_d2_K5.txt, gradient in α, μ, icf \
         (30 inputs)",
    ),
];

/// The (tool, function, size) cases the suite does not run, and why. `None` for the size means
/// every size of the function.
const SKIPPED: [(&str, &str, Option<&str>, &str); 6] = [
    (
        "num-dual",
        "dot",
        Some("n=100000"),
        "forward mode needs one pass per input: 2·10⁵ passes over 10⁵ products, minutes per gradient",
    ),
    (
        "autodiff",
        "dot",
        Some("n=100000"),
        "forward mode needs one pass per input: 2·10⁵ passes over 10⁵ products, minutes per gradient",
    ),
    (
        "num-dual",
        "matvec_sum",
        Some("n=1000"),
        "forward mode needs one pass per input: about 10⁶ passes over 10⁶ products, hours per gradient",
    ),
    (
        "autodiff",
        "matvec_sum",
        Some("n=1000"),
        "forward mode needs one pass per input: about 10⁶ passes over 10⁶ products, hours per gradient",
    ),
    (
        "num-dual",
        "rosenbrock",
        Some("n=100000"),
        "forward mode needs one pass per input: 10⁵ passes over 10⁵ terms, about a minute per gradient",
    ),
    (
        "autodiff",
        "rosenbrock",
        Some("n=100000"),
        "forward mode needs one pass per input: 10⁵ passes over 10⁵ terms, about a minute per gradient",
    ),
];

/// Median times in nanoseconds by function, then size, then tool.
type Medians = BTreeMap<String, BTreeMap<String, BTreeMap<String, f64>>>;

/// Where the report reads from and writes to.
struct Paths {
    criterion: PathBuf,
    output: PathBuf,
    jax: PathBuf,
    scaling: PathBuf,
    adbench: PathBuf,
    checkpointing: PathBuf,
    hessians: PathBuf,
    gradbench: PathBuf,
}

/// `[DIR [OUT]] [--jax FILE] [--scaling FILE] [--adbench FILE] [--checkpointing FILE]
/// [--hessians FILE] [--gradbench FILE]`, with the defaults of the module docs.
fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Paths, String> {
    let mut positional = Vec::new();
    let (mut jax, mut scaling, mut adbench) = (None, None, None);
    let (mut checkpointing, mut hessians, mut gradbench) = (None, None, None);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--jax" | "--scaling" | "--adbench" | "--checkpointing" | "--hessians"
            | "--gradbench" => {
                let value = args.next().ok_or_else(|| format!("{arg} needs a file"))?;
                let slot = match arg.as_str() {
                    "--jax" => &mut jax,
                    "--scaling" => &mut scaling,
                    "--adbench" => &mut adbench,
                    "--checkpointing" => &mut checkpointing,
                    "--hessians" => &mut hessians,
                    _ => &mut gradbench,
                };
                *slot = Some(PathBuf::from(value));
            }
            option if option.starts_with("--") => return Err(format!("unknown option {option}")),
            _ => positional.push(PathBuf::from(arg)),
        }
    }
    if positional.len() > 2 {
        return Err("at most two paths: criterion's directory and the output file".to_string());
    }
    let mut positional = positional.into_iter();
    let criterion = positional.next().unwrap_or_else(|| {
        let target = std::env::var_os("CARGO_TARGET_DIR").unwrap_or_else(|| "target".into());
        PathBuf::from(target).join("criterion")
    });
    let output = positional
        .next()
        .unwrap_or_else(|| PathBuf::from("BENCHMARKS.md"));
    let target = criterion.parent().unwrap_or(Path::new(".")).to_path_buf();
    Ok(Paths {
        jax: jax.unwrap_or_else(|| target.join("jax").join("results.csv")),
        scaling: scaling.unwrap_or_else(|| target.join("scaling.md")),
        adbench: adbench.unwrap_or_else(|| target.join("adbench.md")),
        checkpointing: checkpointing.unwrap_or_else(|| target.join("checkpointing.md")),
        hessians: hessians.unwrap_or_else(|| target.join("hessians.md")),
        gradbench: gradbench.unwrap_or_else(|| target.join("gradbench.md")),
        criterion,
        output,
    })
}

fn main() -> ExitCode {
    let paths = match parse_args(std::env::args().skip(1)) {
        Ok(paths) => paths,
        Err(error) => {
            eprintln!(
                "error: {error}\nusage: bench_report [CRITERION_DIR [OUTPUT]] [--jax FILE.csv] \
                 [--scaling FILE.md] [--adbench FILE.md] [--checkpointing FILE.md] \
                 [--hessians FILE.md] [--gradbench FILE.md]"
            );
            return ExitCode::FAILURE;
        }
    };
    let criterion_dir = &paths.criterion;
    let medians = match read_medians(criterion_dir) {
        Ok(medians) if !medians.is_empty() => medians,
        Ok(_) => {
            eprintln!(
                "error: no criterion results under {} (no */new/estimates.json).\n\
                 Run `cargo bench --bench suite && cargo bench -p ad-peer-bench` first, or pass \
                 criterion's directory as the first argument.",
                criterion_dir.display()
            );
            return ExitCode::FAILURE;
        }
        Err(error) => {
            eprintln!(
                "error: cannot read criterion results under {}: {error}.\n\
                 Run `cargo bench --bench suite && cargo bench -p ad-peer-bench` first, or pass \
                 criterion's directory as the first argument.",
                criterion_dir.display()
            );
            return ExitCode::FAILURE;
        }
    };
    // The optional inputs: absent files leave their sections saying how to produce them; a
    // file that is there but unreadable is an error, not a silently missing section.
    let jax = match optional_file(&paths.jax) {
        Ok(Some(text)) => match parse_jax(&text) {
            Ok(jax) => Some(jax),
            Err(error) => {
                eprintln!("error: {}: {error}", paths.jax.display());
                return ExitCode::FAILURE;
            }
        },
        Ok(None) => None,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let included = [
        &paths.scaling,
        &paths.adbench,
        &paths.checkpointing,
        &paths.hessians,
        &paths.gradbench,
    ]
    .map(|path| optional_file(path));
    let [scaling, adbench, checkpointing, hessians, gradbench] = match included {
        [Ok(scaling), Ok(adbench), Ok(checkpointing), Ok(hessians), Ok(gradbench)] => {
            [scaling, adbench, checkpointing, hessians, gradbench]
        }
        [Err(error), ..]
        | [_, Err(error), ..]
        | [_, _, Err(error), ..]
        | [_, _, _, Err(error), _]
        | [.., Err(error)] => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let report = render(
        &medians,
        jax.as_ref(),
        &[
            Included {
                text: scaling.as_deref(),
                heading: "Scaling and memory",
                command: "cargo run --release -p ad-reports --bin scaling",
                file: "scaling.md",
            },
            Included {
                text: adbench.as_deref(),
                heading: "ADBench",
                command: "cargo run --release --example adbench",
                file: "adbench.md",
            },
            Included {
                text: checkpointing.as_deref(),
                heading: "Checkpointing",
                command: "cargo run --release -p ad-reports --bin checkpointing",
                file: "checkpointing.md",
            },
            Included {
                text: hessians.as_deref(),
                heading: "Hessians of few inputs",
                command: "cargo run --release -p ad-reports --bin hessians",
                file: "hessians.md",
            },
            Included {
                text: gradbench.as_deref(),
                heading: "gradbench",
                command: "gradbench/run-all.sh",
                file: "gradbench.md",
            },
        ],
    );
    if let Err(error) = std::fs::write(&paths.output, report) {
        eprintln!("error: cannot write {}: {error}", paths.output.display());
        return ExitCode::FAILURE;
    }
    let with = |present: bool, path: &Path| {
        if present {
            format!("with {}", path.display())
        } else {
            format!("without {} (not found)", path.display())
        }
    };
    println!(
        "wrote {} ({} functions, from {}; {}; {}; {}; {}; {}; {})",
        paths.output.display(),
        medians.len(),
        criterion_dir.display(),
        with(jax.is_some(), &paths.jax),
        with(scaling.is_some(), &paths.scaling),
        with(adbench.is_some(), &paths.adbench),
        with(checkpointing.is_some(), &paths.checkpointing),
        with(hessians.is_some(), &paths.hessians),
        with(gradbench.is_some(), &paths.gradbench),
    );
    ExitCode::SUCCESS
}

/// The text of `path`, or `None` if there is no such file.
fn optional_file(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(format!("cannot read {}: {error}", path.display())),
    }
}

// --- reading criterion's output -----------------------------------------------------------------

/// Every benchmark under `dir`: its id from `new/benchmark.json`, its median from
/// `new/estimates.json`.
fn read_medians(dir: &Path) -> Result<Medians, String> {
    let mut estimate_files = Vec::new();
    find_estimates(dir, &mut estimate_files).map_err(|e| e.to_string())?;
    let mut medians = Medians::new();
    for estimates in estimate_files {
        let new_dir = estimates.parent().expect("a file has a parent");
        let read = |path: &Path| {
            std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
        };
        let benchmark = read(&new_dir.join("benchmark.json"))?;
        let field = |name: &str| {
            json_string(&benchmark, name)
                .ok_or_else(|| format!("{}: no \"{name}\"", new_dir.display()))
        };
        let (group, tool) = (field("group_id")?, field("function_id")?);
        let size = json_string(&benchmark, "value_str").unwrap_or_default();
        let median = median_point_estimate(&read(&estimates)?)
            .ok_or_else(|| format!("{}: no median point estimate", estimates.display()))?;
        medians
            .entry(group)
            .or_default()
            .entry(size)
            .or_default()
            .insert(tool, median);
    }
    Ok(medians)
}

/// Collects the `*/new/estimates.json` files under `dir`, recursively.
fn find_estimates(dir: &Path, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            find_estimates(&path, found)?;
        } else if path
            .file_name()
            .is_some_and(|name| name == "estimates.json")
            && path
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|name| name == "new")
        {
            found.push(path);
        }
    }
    Ok(())
}

/// The number after `"point_estimate":` inside the `"median"` object of criterion's
/// `estimates.json` (`{"mean": {...}, "median": {"confidence_interval": {...},
/// "point_estimate": 1234.5, "standard_error": ...}, ...}`).
fn median_point_estimate(json: &str) -> Option<f64> {
    let median = &json[json.find("\"median\"")?..];
    let after_key = &median[median.find("\"point_estimate\"")? + "\"point_estimate\"".len()..];
    let number = after_key.trim_start().strip_prefix(':')?.trim_start();
    let end = number
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .unwrap_or(number.len());
    number[..end].parse().ok()
}

/// The string value of the first `"key": "..."` in `json` (escapes `\"`, `\\`, `\/`, `\n`,
/// `\t`, `\uXXXX` decoded).
fn json_string(json: &str, key: &str) -> Option<String> {
    let quoted_key = format!("\"{key}\"");
    let rest = &json[json.find(&quoted_key)? + quoted_key.len()..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let mut chars = rest.strip_prefix('"')?.chars();
    let mut value = String::new();
    loop {
        match chars.next()? {
            '"' => return Some(value),
            '\\' => match chars.next()? {
                'n' => value.push('\n'),
                't' => value.push('\t'),
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    value.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                other => value.push(other),
            },
            c => value.push(c),
        }
    }
}

// --- reading JAX's results ----------------------------------------------------------------------

/// JAX's medians from `benches/jax/bench.py`'s CSV.
struct Jax {
    /// The `# key: value` lines: versions, date, settings.
    meta: Vec<(String, String)>,
    /// `(jit(f), jit(value_and_grad(f)))` in nanoseconds, by function and size.
    times: BTreeMap<(String, String), (f64, f64)>,
}

impl Jax {
    fn meta(&self, key: &str) -> &str {
        self.meta
            .iter()
            .find(|(k, _)| k == key)
            .map_or("unknown", |(_, value)| value.as_str())
    }
}

/// The columns `bench.py` writes, in its order.
const JAX_COLUMNS: [&str; 6] = [
    "function",
    "size",
    "jit_f_ns",
    "jit_value_and_grad_ns",
    "compile_f_ms",
    "compile_value_and_grad_ms",
];

/// Reads `# key: value` lines, the header (checked against [`JAX_COLUMNS`]), then one row per
/// case.
fn parse_jax(text: &str) -> Result<Jax, String> {
    let mut meta = Vec::new();
    let mut times = BTreeMap::new();
    let mut header_seen = false;
    for (number, line) in text.lines().enumerate().map(|(i, line)| (i + 1, line)) {
        if let Some(comment) = line.strip_prefix('#') {
            if let Some((key, value)) = comment.split_once(':') {
                meta.push((key.trim().to_string(), value.trim().to_string()));
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let fields = csv_fields(line);
        if !header_seen {
            if fields != JAX_COLUMNS {
                return Err(format!(
                    "line {number}: expected the header {}, found {line}",
                    JAX_COLUMNS.join(",")
                ));
            }
            header_seen = true;
            continue;
        }
        if fields.len() != JAX_COLUMNS.len() {
            return Err(format!(
                "line {number}: {} fields, expected {}",
                fields.len(),
                JAX_COLUMNS.len()
            ));
        }
        let number_at = |i: usize| {
            fields[i]
                .parse::<f64>()
                .ok()
                .filter(|t| t.is_finite() && *t > 0.0)
                .ok_or_else(|| format!("line {number}: `{}` is not a positive time", fields[i]))
        };
        let key = (fields[0].clone(), fields[1].clone());
        times.insert(key, (number_at(2)?, number_at(3)?));
    }
    if !header_seen {
        return Err("no header line".to_string());
    }
    Ok(Jax { meta, times })
}

/// The fields of one CSV line, `"..."` quoting (with `""` for a quote) undone.
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().expect("one field").push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(String::new()),
            (c, _) => fields.last_mut().expect("one field").push(c),
        }
    }
    fields
}

// --- the report ---------------------------------------------------------------------------------

/// The number in a size label (`n=1000` → 1000), for ordering sizes; labels without one first.
fn size_order(size: &str) -> u64 {
    let digits: String = size
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap_or(0)
}

/// Why `tool` has no result for `function` at `size`, if the suite skips it on purpose.
fn skip_reason(tool: &str, function: &str, size: &str) -> Option<&'static str> {
    SKIPPED
        .iter()
        .find(|(t, f, s, _)| *t == tool && *f == function && s.is_none_or(|s| s == size))
        .map(|(_, _, _, reason)| *reason)
}

/// The functions of `medians` in report order (known ones first, then any others by name).
fn ordered_functions(medians: &Medians) -> Vec<&String> {
    let rank = |name: &str| {
        FUNCTIONS
            .iter()
            .position(|(f, _)| *f == name)
            .unwrap_or(FUNCTIONS.len())
    };
    let mut functions: Vec<&String> = medians.keys().collect();
    functions.sort_by_key(|name| (rank(name), (*name).clone()));
    functions
}

/// The (function, size) rows in report order.
fn rows(medians: &Medians) -> Vec<(&str, &str, &BTreeMap<String, f64>)> {
    let mut rows = Vec::new();
    for function in ordered_functions(medians) {
        let mut sizes: Vec<(&String, &BTreeMap<String, f64>)> = medians[function].iter().collect();
        sizes.sort_by_key(|(size, _)| size_order(size));
        for (size, tools) in sizes {
            rows.push((function.as_str(), size.as_str(), tools));
        }
    }
    rows
}

/// Writes the whole report.
fn render(medians: &Medians, jax: Option<&Jax>, included: &[Included]) -> String {
    let rows = rows(medians);
    let mut out = String::new();
    let _ = writeln!(out, "# Benchmarks\n");
    let _ = writeln!(
        out,
        "Generated by `cargo run --release -p ad-reports --bin bench_report` from the criterion output of \
         `cargo bench --bench suite && cargo bench -p ad-peer-bench` (`benches/suite`, \
         `benches/suite_easy_ml_ad_trait`), with JAX's times from `bash benches/jax/run.sh`, \
         the scaling table from `cargo run --release -p ad-reports --bin scaling`, the ADBench table \
         from `cargo run --release --example adbench`, the checkpointing table from `cargo \
         run --release -p ad-reports --bin checkpointing` and the Hessian table from `cargo run \
         --release -p ad-reports --bin hessians` when those were run first. Every Rust time is criterion's median; every tool's \
         gradient was checked against `ad`'s before it was measured (and `ad`'s against central \
         differences), so each row compares the same computation. Regenerate after a run; do \
         not edit by hand.\n"
    );
    render_machine(&mut out);
    render_times(&mut out, &rows);
    render_ratios(&mut out, &rows);
    render_speedups(&mut out, &rows);
    render_jax(&mut out, medians, jax);
    for table in included {
        render_included(&mut out, table);
    }
    render_skips(&mut out, &rows);
    render_definitions(&mut out);
    out
}

/// The machine, toolchain, date and load.
fn render_machine(out: &mut String) {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|line| line.starts_with("model name"))
        .and_then(|line| line.split_once(':'))
        .map_or("unknown".to_string(), |(_, model)| model.trim().to_string());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let rustc = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .arg("--version")
        .output()
        .ok()
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .map_or("unknown".to_string(), |version| version.trim().to_string());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_else(|| "unknown".to_string());
    let _ = writeln!(out, "## Machine\n");
    let _ = writeln!(out, "- date: {} (UTC)", today());
    let _ = writeln!(out, "- CPU: {cpu}, {cores} cores available (nproc)");
    let _ = writeln!(out, "- toolchain: {rustc}, `--release` (bench profile)");
    let _ = writeln!(out, "- `ad`: {}", ad_version());
    let _ = writeln!(
        out,
        "- load average (1, 5, 15 min) when the report was written: {load}. The machine is \
         shared; read the times as indicative to about ±20 %, the ratios within a row as more \
         stable than the absolute times.\n"
    );
}

/// The commit of the working tree the report is written in, and whether `ad`'s sources
/// (`src`, `ad-runtime`, `ad-macro`) differ from it: the `ad` that was measured if the report is
/// written right after the run.
fn ad_version() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|output| output.status.success())
            .and_then(|output| String::from_utf8(output.stdout).ok())
    };
    match git(&["rev-parse", "--short", "HEAD"]) {
        Some(commit) => {
            let changes = git(&[
                "status",
                "--porcelain",
                "--",
                "src",
                "ad-runtime",
                "ad-macro",
            ])
            .is_some_and(|status| !status.trim().is_empty());
            let suffix = if changes {
                " with uncommitted changes to its sources"
            } else {
                ""
            };
            format!("commit {}{suffix}", commit.trim())
        }
        None => "unknown commit (not written inside a git work tree)".to_string(),
    }
}

/// Today's date from the system clock, `YYYY-MM-DD`.
fn today() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm).
    let z = (seconds / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// A table header with one column per tool.
fn header(out: &mut String, tools: &[&str]) {
    let _ = writeln!(out, "| function | size | {} |", tools.join(" | "));
    let _ = writeln!(out, "| --- | --- |{}", " ---: |".repeat(tools.len()));
}

/// The cell for a tool with no result: "skipped" (reason below) or "—" (not measured).
fn missing_cell(tool: &str, function: &str, size: &str) -> &'static str {
    if skip_reason(tool, function, size).is_some() {
        "skipped"
    } else {
        "—"
    }
}

/// Median times.
fn render_times(out: &mut String, rows: &[(&str, &str, &BTreeMap<String, f64>)]) {
    let _ = writeln!(out, "## Median time\n");
    let _ = writeln!(
        out,
        "`primal` is the plain `f64` function; the other columns compute its value and gradient. \
         `ad` is the function's `_grad`, which runs in forward mode (one pass over \
         `Dual<f64, Lanes<K>>`, no tape) where the differentiable parameters hold at most 8 \
         scalars by their types: scalar_mult (2), rotate_vec_by_quat (7) and the chain (1). \
         Every other row is the tape; the chain on the tape is in the scaling table below.\n"
    );
    header(out, &TOOLS);
    for (function, size, tools) in rows {
        let cells: Vec<String> = TOOLS
            .iter()
            .map(|tool| match tools.get(*tool) {
                Some(&ns) => format_time(ns),
                None => missing_cell(tool, function, size).to_string(),
            })
            .collect();
        let _ = writeln!(out, "| {function} | {size} | {} |", cells.join(" | "));
    }
    let _ = writeln!(out);
}

/// Gradient time over primal time.
fn render_ratios(out: &mut String, rows: &[(&str, &str, &BTreeMap<String, f64>)]) {
    let _ = writeln!(out, "## Gradient time / primal time\n");
    let _ = writeln!(
        out,
        "How many primal calls one gradient costs (lower is better).\n"
    );
    header(out, &TOOLS[1..]);
    for (function, size, tools) in rows {
        let primal = tools.get("primal").copied();
        let cells: Vec<String> = TOOLS[1..]
            .iter()
            .map(|tool| match (tools.get(*tool), primal) {
                (Some(&ns), Some(primal)) => format!("{}×", three_digits(ns / primal)),
                (Some(_), None) => "no primal".to_string(),
                (None, _) => missing_cell(tool, function, size).to_string(),
            })
            .collect();
        let _ = writeln!(out, "| {function} | {size} | {} |", cells.join(" | "));
    }
    let _ = writeln!(out);
}

/// The cell for another tool's time `theirs` against `ad`'s `ours`: the speedup `theirs / ours`,
/// bold when the other tool is faster, in which case `sentence(theirs, ours, factor)` (the
/// times formatted, and how many times faster) joins `wins`. Also whether `ad` was faster.
fn speedup_cell(
    theirs: f64,
    ours: f64,
    wins: &mut Vec<String>,
    sentence: impl FnOnce(String, String, String) -> String,
) -> (String, bool) {
    let speedup = theirs / ours;
    if speedup < 1.0 {
        wins.push(sentence(
            format_time(theirs),
            format_time(ours),
            three_digits(1.0 / speedup),
        ));
        (format!("**{}×**", three_digits(speedup)), false)
    } else {
        (format!("{}×", three_digits(speedup)), true)
    }
}

/// `ad`'s speed-up over each peer, and a plain list of where a peer is faster.
fn render_speedups(out: &mut String, rows: &[(&str, &str, &BTreeMap<String, f64>)]) {
    let peers: Vec<&str> = PEERS.iter().map(|(peer, _)| *peer).collect();
    let _ = writeln!(out, "## `ad`'s speed-up over each peer\n");
    let _ = writeln!(
        out,
        "Peer's gradient time / `ad`'s gradient time: above 1× `ad` is faster; **below 1× the \
         peer is faster** (bold).\n"
    );
    header(out, &peers);
    let mut peer_wins = Vec::new();
    for (function, size, tools) in rows {
        let ad = tools.get("ad").copied();
        let cells: Vec<String> = peers
            .iter()
            .map(|peer| match (tools.get(*peer), ad) {
                (Some(&ns), Some(ad)) => {
                    speedup_cell(ns, ad, &mut peer_wins, |theirs, ours, factor| {
                        format!(
                            "- {function} {size}: {peer} takes {theirs} where `ad` takes {ours} \
                             ({peer} is {factor}× faster)"
                        )
                    })
                    .0
                }
                (Some(_), None) => "no ad".to_string(),
                (None, _) => missing_cell(peer, function, size).to_string(),
            })
            .collect();
        let _ = writeln!(out, "| {function} | {size} | {} |", cells.join(" | "));
    }
    let _ = writeln!(out);
    if peer_wins.is_empty() {
        let _ = writeln!(out, "No peer is faster than `ad` on any measured case.\n");
    } else {
        let _ = writeln!(out, "Where a peer is faster than `ad`:\n");
        for line in peer_wins {
            let _ = writeln!(out, "{line}");
        }
        let _ = writeln!(out);
    }
}

/// JAX beside `ad`: its two times, its own gradient/primal ratio, and `ad`'s speed-up over its
/// `jit(value_and_grad)`, or how to produce them.
fn render_jax(out: &mut String, medians: &Medians, jax: Option<&Jax>) {
    let _ = writeln!(out, "## JAX\n");
    let Some(jax) = jax else {
        let _ = writeln!(
            out,
            "Not in this report: run `bash benches/jax/run.sh` (it installs `jax` from PyPI into a \
             virtual environment under the target directory and writes \
             `target/jax/results.csv`, about a minute), then this program again.\n"
        );
        return;
    };
    let _ = writeln!(
        out,
        "JAX {} (jaxlib {}, Python {}) on {}, measured {} by `bash benches/jax/run.sh` \
         (`benches/jax/bench.py`): float64 enabled; the median of `jit(f)` and of \
         `jit(value_and_grad(f))` after compilation and warm-up, every call waited for with \
         `block_until_ready`; XLA_FLAGS `{}`. The inputs are the Rust suite's, and each JAX \
         gradient was checked (analytic where short, central differences everywhere) before it \
         was timed. The functions are written as a JAX user would: vectorised `jnp` \
         operations (`jnp.dot`, `@`, `jnp.sum`, GMM over all points at once); the chain is a \
         `{}` of n steps (a Python loop would unroll n steps into the compiled program).\n",
        jax.meta("jax"),
        jax.meta("jaxlib"),
        jax.meta("python"),
        jax.meta("cpu"),
        jax.meta("date"),
        jax.meta("XLA_FLAGS"),
        jax.meta("chain"),
    );
    let _ = writeln!(
        out,
        "`ad` vs JAX is JAX's `jit(value_and_grad)` time / `ad`'s gradient time: above 1× `ad` \
         is faster; **below 1× JAX is faster** (bold). JAX's own ratio is `jit(value_and_grad)` \
         / `jit(f)`, its gradient cost in calls of its own compiled function; `ad`'s ratio is \
         over the plain Rust primal.\n"
    );
    let _ = writeln!(
        out,
        "| function | size | Rust primal | ad | JAX jit(f) | JAX jit(value_and_grad) | JAX's ratio | \
         ad's ratio | ad vs JAX |"
    );
    let _ = writeln!(out, "| --- | --- |{}", " ---: |".repeat(7));
    let mut keys: Vec<(&str, &str)> = medians
        .iter()
        .flat_map(|(function, sizes)| {
            sizes
                .keys()
                .map(move |size| (function.as_str(), size.as_str()))
        })
        .chain(jax.times.keys().map(|(f, s)| (f.as_str(), s.as_str())))
        .collect();
    let rank = |name: &str| {
        FUNCTIONS
            .iter()
            .position(|(f, _)| *f == name)
            .unwrap_or(FUNCTIONS.len())
    };
    keys.sort_by_key(|&(function, size)| (rank(function), function, size_order(size), size));
    keys.dedup();
    let (mut jax_wins, mut ad_wins) = (Vec::new(), 0);
    for (function, size) in keys {
        let tools = medians.get(function).and_then(|sizes| sizes.get(size));
        let rust = |tool: &str| tools.and_then(|tools| tools.get(tool)).copied();
        let (primal, ad) = (rust("primal"), rust("ad"));
        let jax_times = jax.times.get(&(function.to_string(), size.to_string()));
        let time = |ns: Option<f64>| ns.map_or("—".to_string(), format_time);
        let ratio = |num: Option<f64>, den: Option<f64>| match (num, den) {
            (Some(num), Some(den)) => format!("{}×", three_digits(num / den)),
            _ => "—".to_string(),
        };
        let versus = match (jax_times, ad) {
            (Some(&(_, jax_grad)), Some(ad)) => {
                let (cell, ad_faster) =
                    speedup_cell(jax_grad, ad, &mut jax_wins, |theirs, ours, factor| {
                        format!(
                            "- {function} {size}: JAX's `jit(value_and_grad)` takes {theirs} \
                             where `ad` takes {ours} (JAX is {factor}× faster)"
                        )
                    });
                ad_wins += usize::from(ad_faster);
                cell
            }
            _ => "—".to_string(),
        };
        let _ = writeln!(
            out,
            "| {function} | {size} | {} | {} | {} | {} | {} | {} | {versus} |",
            time(primal),
            time(ad),
            time(jax_times.map(|t| t.0)),
            time(jax_times.map(|t| t.1)),
            ratio(jax_times.map(|t| t.1), jax_times.map(|t| t.0)),
            ratio(ad, primal),
        );
    }
    let _ = writeln!(out);
    if jax_wins.is_empty() {
        let _ = writeln!(
            out,
            "`ad` is faster than JAX's `jit(value_and_grad)` on every case measured by both \
             ({ad_wins}).\n"
        );
    } else {
        let _ = writeln!(
            out,
            "Where JAX is faster than `ad` ({} of {} cases measured by both):\n",
            jax_wins.len(),
            jax_wins.len() + ad_wins
        );
        for line in jax_wins {
            let _ = writeln!(out, "{line}");
        }
        let _ = writeln!(out);
    }
}

/// A table another program writes for the report (`reports/src/bin/scaling.rs`, `examples/adbench.rs`,
/// `reports/src/bin/checkpointing.rs`, `reports/src/bin/hessians.rs`).
struct Included<'a> {
    /// The file's text, if it was found.
    text: Option<&'a str>,
    heading: &'a str,
    /// The command that writes it.
    command: &'a str,
    /// Its name under the target directory.
    file: &'a str,
}

/// An included table, or how to produce it.
fn render_included(out: &mut String, included: &Included) {
    match included.text {
        Some(text) => {
            let _ = writeln!(out, "{}\n", text.trim_end());
        }
        None => {
            let _ = writeln!(
                out,
                "## {}\n\nNot in this report: run `{}` (it writes `target/{}`), then this \
                 program again.\n",
                included.heading, included.command, included.file
            );
        }
    }
}

/// The cases left out on purpose, and any tool missing without a reason.
fn render_skips(out: &mut String, rows: &[(&str, &str, &BTreeMap<String, f64>)]) {
    let _ = writeln!(out, "## Not measured\n");
    let _ = writeln!(out, "| tool | function | size | why |");
    let _ = writeln!(out, "| --- | --- | --- | --- |");
    for (tool, function, size, reason) in SKIPPED {
        let _ = writeln!(
            out,
            "| {tool} | {function} | {} | {reason} |",
            size.unwrap_or("all")
        );
    }
    let unexplained: Vec<String> = rows
        .iter()
        .flat_map(|(function, size, tools)| {
            TOOLS
                .iter()
                .filter(|tool| !tools.contains_key(**tool))
                .filter(|tool| skip_reason(tool, function, size).is_none())
                .map(move |tool| format!("{tool} on {function} {size}"))
        })
        .collect();
    if !unexplained.is_empty() {
        let _ = writeln!(
            out,
            "\nMissing from the criterion output with no reason above (an interrupted or \
             partial run?): {}.",
            unexplained.join(", ")
        );
    }
    let _ = writeln!(out);
}

/// What each function and each peer computes.
fn render_definitions(out: &mut String) {
    let _ = writeln!(out, "## Functions\n");
    for (function, definition) in FUNCTIONS {
        let _ = writeln!(out, "- **{function}**: {definition}.");
    }
    let _ = writeln!(out, "\n## Peers\n");
    for (peer, how) in PEERS {
        let _ = writeln!(out, "- **{peer}**: {how}.");
    }
    let _ = writeln!(
        out,
        "\nEach peer runs the same operations as `ad` (one `Objective` per function, generic over \
         the peer's number type, in `benches/common/objectives.rs`). `easy-ml` and `ad_trait` \
         are measured by `benches/suite_easy_ml_ad_trait`, a second run under the same \
         criterion ids."
    );
}

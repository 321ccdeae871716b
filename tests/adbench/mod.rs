//! ADBench's three objectives (GMM, BA, LSTM) written as ordinary Rust with `#[reverse_diff]`,
//! a reader for ADBench's input files, and what the tests, the example and the benchmark share.
//!
//! The definitions follow Microsoft's ADBench (its C++ reference implementations and its
//! sign conventions):
//!
//! - GMM ([`gmm`]): `F = −(nd/2) ln 2π + Σ_i LSE_k(β_ik) − n·LSE(α) + W`, with
//!   `β_ik = α_k + Σ_j q_kj − ½‖Q_k (x_i − μ_k)‖²`, Q_k lower triangular with diagonal
//!   `exp(q_k)` and `l_k` below it column by column, and the Wishart prior
//!   `W = Σ_k [½γ² (Σ_j exp(q_kj)² + Σ l_k²) − m Σ_j q_kj] − K·C`. Gradient: (α, μ, icf).
//! - BA ([`ba`]): per observation, `w (proj(camera, point) − feature)` and `1 − w²`; the
//!   Jacobian of all residuals in compressed sparse rows.
//! - LSTM ([`lstm`]): ADBench's character-level loss, with its `ln(Σ exp(y) + 2)` and the hidden
//!   state in the input and change gates. Gradient: main_params then extra_params.
//!
//! The inputs are in `data/adbench/` (ADBench's files, MIT licence in `LICENSE.TXT`).
//!
//! Included by `tests/adbench.rs` (`mod adbench;`), `examples/adbench.rs` and
//! `benches/adbench.rs` (`#[path = "../tests/adbench/mod.rs"] mod adbench;`).
#![allow(dead_code)] // each of the three users (tests, example, benchmark) uses a different part

pub mod ba;
pub mod gmm;
pub mod lstm;
pub mod reader;

use reader::ReadError;
use std::path::PathBuf;

/// The path of an input file, relative to `data/adbench/` of this package.
pub fn data_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data/adbench")
        .join(relative)
}

/// Reads and parses an input file of `data/adbench/`, panicking with the file name and the
/// reader's message (line number and what was expected) if it is missing or malformed.
pub fn load<T>(relative: &str, parse: impl FnOnce(&str) -> Result<T, ReadError>) -> T {
    let path = data_path(relative);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    parse(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// SplitMix64 (Steele, Lea and Flood 2014): a small, fast, seeded generator, so generated
/// instances and random directions are the same on every run and need no crate.
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform on [0, 1), with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal, by the Box–Muller transform.
    pub fn normal(&mut self) -> f64 {
        let radius = (-2.0 * (1.0 - self.uniform()).ln()).sqrt();
        radius * (2.0 * std::f64::consts::PI * self.uniform()).cos()
    }

    /// A vector of `len` entries uniform on [−1, 1): a random direction for
    /// [`directional_derivatives`].
    pub fn direction(&mut self, len: usize) -> Vec<f64> {
        (0..len).map(|_| 2.0 * self.uniform() - 1.0).collect()
    }
}

/// JAX's `check_grads` test of a gradient: along `direction` u, the derivative the gradient
/// predicts, `⟨∇f, u⟩`, and the central difference `(f(x + εu) − f(x − εu)) / 2ε`.
pub fn directional_derivatives(
    f: impl Fn(&[f64]) -> f64,
    x: &[f64],
    gradient: &[f64],
    direction: &[f64],
    step: f64,
) -> (f64, f64) {
    assert_eq!(gradient.len(), x.len(), "gradient length");
    assert_eq!(direction.len(), x.len(), "direction length");
    let predicted = gradient.iter().zip(direction).map(|(g, u)| g * u).sum();
    let moved = |sign: f64| -> Vec<f64> {
        x.iter()
            .zip(direction)
            .map(|(x, u)| x + sign * step * u)
            .collect()
    };
    let central = (f(&moved(1.0)) - f(&moved(-1.0))) / (2.0 * step);
    (predicted, central)
}

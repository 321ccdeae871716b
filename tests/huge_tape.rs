//! Huge tapes: a gradient over 10⁸ recorded operations completes, is right,
//! and reports its peak memory. Ignored by default (it needs a few GB and is slow in debug
//! builds); `.ci/run` runs it in release mode:
//! `cargo test --release --test huge_tape -- --ignored --nocapture`.
//!
//! The tape-full message (indices are 32-bit) is tested through a lowered limit in
//! `tests/runtime.rs` (`full_tape_panics_with_its_limit`).

use ad::{reverse_diff, Tape};
use approx::assert_relative_eq;
use std::time::Instant;

/// `y ← a·y + 1`, `steps` times, from `y = x`: one record per step (the statement is one
/// record, operand `y`, partial `a`), and `y = aⁿ x + (1 − aⁿ)/(1 − a)`, `dy/dx = aⁿ`.
#[reverse_diff]
fn affine_chain(x: f64, steps: usize) -> f64 {
    let mut y = x;
    for _ in 0..steps {
        y = y * 0.99999999 + 1.0;
    }
    y
}

/// The peak resident memory of this process (`VmHWM` in `/proc/self/status`), in bytes, where
/// the kernel reports it.
fn peak_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[test]
#[ignore = "10⁸ operations: several GB; run in release by .ci/run"]
fn gradient_over_a_hundred_million_operations() {
    const STEPS: usize = 100_000_000;
    let a: f64 = 0.99999999;
    let x0 = 2.0;
    let started = Instant::now();
    let tape = Tape::new();
    let x = tape.var(x0);
    let y = affine_chain(x, STEPS);
    let recorded = tape.len() - 1;
    assert_eq!(recorded, 100_000_000, "one record per step");
    let forward = started.elapsed();
    tape.backward(y);
    let derivative = tape.adjoint(x);
    let total = started.elapsed();
    drop(tape);

    // Analytic: aⁿ, and the value aⁿ x + (1 − aⁿ)/(1 − a). The sweep multiplies 10⁸ factors,
    // each rounding by at most ε/2: relative error below 10⁸ · 1.1·10⁻¹⁶ ≈ 1.1·10⁻⁸.
    let power = a.powf(STEPS as f64);
    assert_relative_eq!(derivative, power, max_relative = 2e-8);
    assert_relative_eq!(
        y.value(),
        power * x0 + (1.0 - power) / (1.0 - a),
        max_relative = 1e-7
    );

    let peak = peak_resident_bytes();
    // Measured: 24 bytes per operation (operand index, partial, node end, adjoint); twice that
    // would mean a layout or growth regression.
    if let Some(bytes) = peak {
        assert!(bytes < 48 * recorded as u64, "peak {bytes} bytes");
    }
    println!(
        "{recorded} operations: forward {forward:.2?}, forward + backward {total:.2?}, \
         peak resident memory {}",
        match peak {
            Some(bytes) => format!(
                "{:.2} GB ({:.1} bytes per operation)",
                bytes as f64 / 1e9,
                bytes as f64 / recorded as f64
            ),
            None => "not reported by this system".to_string(),
        }
    );
}

//! An ODE for the checkpointing tests and benchmark: a ring of coupled nonlinear oscillators,
//! integrated by the classical Runge–Kutta method.

use ad::reverse_diff;

/// A ring of coupled nonlinear oscillators: y_i' = k (y_{i+1} − y_i) − y_i³ / 10.
#[reverse_diff]
fn ring(y: &[f64], k: f64) -> Vec<f64> {
    let n = y.len();
    (0..n)
        .map(|i| k * (y[(i + 1) % n] - y[i]) - 0.1 * y[i] * y[i] * y[i])
        .collect()
}

/// One classical Runge–Kutta step of `ring`.
#[reverse_diff]
pub fn rk4(y: &[f64], k: f64, h: f64) -> Vec<f64> {
    let k1 = ring(y, k);
    let y2: Vec<f64> = y.iter().zip(&k1).map(|(a, b)| a + 0.5 * h * b).collect();
    let k2 = ring(&y2, k);
    let y3: Vec<f64> = y.iter().zip(&k2).map(|(a, b)| a + 0.5 * h * b).collect();
    let k3 = ring(&y3, k);
    let y4: Vec<f64> = y.iter().zip(&k3).map(|(a, b)| a + h * b).collect();
    let k4 = ring(&y4, k);
    (0..y.len())
        .map(|i| y[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]))
        .collect()
}

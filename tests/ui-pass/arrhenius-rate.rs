// Arrhenius rate constant with `f64::consts`-style constants in a `const`.
use ad::reverse_diff;

const GAS_CONSTANT: f64 = 8.314;

#[reverse_diff]
fn rate(prefactor: f64, activation_energy: f64, temperature: f64) -> f64 {
    prefactor * (-activation_energy / (GAS_CONSTANT * temperature)).exp()
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (_, (da, de, dt)) = rate_grad(1e3, 5e3, 300.0);
    check_gradient(
        |p| rate(p[0], p[1], p[2]),
        &[1e3, 5e3, 300.0],
        &[da, de, dt],
    );
}

// Black-Scholes call price with a smooth normal CDF approximation.
use ad::reverse_diff;

#[reverse_diff]
fn normal_cdf(x: f64) -> f64 {
    // Abramowitz and Stegun 7.1.26 for erf, extended to negative arguments by symmetry.
    let z = x / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.3275911 * z.abs());
    let poly = t
        * (0.254829592
            + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    let erf = 1.0 - poly * (-z * z).exp();
    let signed = if z >= 0.0 { erf } else { -erf };
    0.5 * (1.0 + signed)
}

#[reverse_diff]
fn call_price(spot: f64, strike: f64, years: f64, rate: f64, volatility: f64) -> f64 {
    let root = years.sqrt();
    let d1 =
        ((spot / strike).ln() + (rate + 0.5 * volatility.powi(2)) * years) / (volatility * root);
    let d2 = d1 - volatility * root;
    spot * normal_cdf(d1) - strike * (-rate * years).exp() * normal_cdf(d2)
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let x = [100.0, 95.0, 0.5, 0.03, 0.2];
    let (_, (a, b, c, d, e)) = call_price_grad(x[0], x[1], x[2], x[3], x[4]);
    check_gradient(
        |p| call_price(p[0], p[1], p[2], p[3], p[4]),
        &x,
        &[a, b, c, d, e],
    );
}

//! `Option<f64>` and `Result<f64, E>` inside differentiated functions: as locals, as
//! parameters, and as results with `?`. A function returning `Result<f64, E>` gets
//! `f_grad -> Result<(f64, G), E>` (and `Option<f64>` gives `Option<(f64, G)>`): an `Err` of the
//! forward pass comes back as it is. Expected values are analytic derivatives.

use ad::reverse_diff;
use approx::assert_relative_eq;

/// Why a log-likelihood could not be computed.
#[derive(Debug, PartialEq)]
enum DomainError {
    /// The entry at this index is not positive.
    NotPositive(usize),
    /// There was nothing to sum.
    Empty,
}

/// The error of a caller, which `?` reaches through `From`.
#[derive(Debug, PartialEq)]
enum ModelError {
    Domain(DomainError),
}

impl From<DomainError> for ModelError {
    fn from(error: DomainError) -> ModelError {
        ModelError::Domain(error)
    }
}

/// `ln x`, failing on a non-positive `x`.
#[reverse_diff]
fn checked_ln(x: f64, index: usize) -> Result<f64, DomainError> {
    if x <= 0.0 {
        Err(DomainError::NotPositive(index))
    } else {
        Ok(x.ln())
    }
}

/// `Σ ln x_i`, with `?` on each helper call.
#[reverse_diff]
fn sum_of_logs(xs: &[f64]) -> Result<f64, DomainError> {
    if xs.is_empty() {
        return Err(DomainError::Empty);
    }
    let mut total = 0.0;
    for (index, x) in xs.iter().enumerate() {
        total += checked_ln(*x, index)?;
    }
    Ok(total)
}

/// `w · Σ ln x_i`, converting the helper's error with `?` and `From`.
#[reverse_diff]
fn weighted_log_likelihood(w: f64, xs: &[f64]) -> Result<f64, ModelError> {
    let total = sum_of_logs(xs)?;
    Ok(w * total)
}

/// `Option<f64>` and `Result<f64, E>` locals, matched and combined.
#[reverse_diff]
fn first_positive_squared_or_mean(xs: &[f64]) -> f64 {
    let first: Option<f64> = xs.iter().copied().find(|v| *v > 0.0);
    let fallback: Result<f64, &str> = if xs.is_empty() {
        Err("empty")
    } else {
        Ok(xs.iter().sum::<f64>() / xs.len() as f64)
    };
    match first {
        Some(v) => v * v,
        None => fallback.unwrap_or(0.0),
    }
}

/// `a / b`, or `None` when `b` is zero; `?` on an `Option`.
#[reverse_diff]
fn ratio(a: f64, b: f64) -> Option<f64> {
    let inverse = (b != 0.0).then(|| 1.0 / b)?;
    Some(a * inverse)
}

/// An `Option<f64>` parameter: its gradient is an `Option<f64>` of the same variant.
#[reverse_diff]
fn scaled(x: f64, factor: Option<f64>) -> f64 {
    x * factor.map(|f| f * f).unwrap_or(1.0)
}

/// A result through an alias of `Result` (`std::io::Result<f64>`).
#[reverse_diff]
fn checked_sqrt(x: f64) -> std::io::Result<f64> {
    if x < 0.0 {
        return Err(std::io::Error::other("negative"));
    }
    Ok(x.sqrt())
}

#[test]
fn results_with_question_mark() {
    let xs = [0.5, 2.0, 3.0];
    let (value, gradient) = sum_of_logs_grad(&xs).expect("all entries are positive");
    // d(Σ ln x_i)/dx_i = 1/x_i.
    assert_relative_eq!(
        value,
        xs.iter().map(|x| x.ln()).sum::<f64>(),
        max_relative = 1e-15
    );
    for (got, x) in gradient.iter().zip(xs) {
        assert_relative_eq!(*got, 1.0 / x, max_relative = 1e-15);
    }
    // The plain function is unchanged.
    assert_eq!(sum_of_logs(&xs), Ok(value));
}

#[test]
fn errors_pass_through_the_companion() {
    assert_eq!(
        sum_of_logs_grad(&[1.0, -2.0, 3.0]),
        Err(DomainError::NotPositive(1))
    );
    assert_eq!(sum_of_logs_grad(&[]), Err(DomainError::Empty));
    assert_eq!(
        weighted_log_likelihood_grad(2.0, &[0.0]),
        Err(ModelError::Domain(DomainError::NotPositive(0)))
    );
    // After an early return the thread's tape is usable again.
    let (value, dx) = checked_ln_grad(4.0, 0).expect("positive");
    assert_relative_eq!(value, 4.0f64.ln(), max_relative = 1e-15);
    assert_relative_eq!(dx, 0.25, max_relative = 1e-15);
}

#[test]
fn question_mark_converts_errors_with_from() {
    let (w, xs) = (1.5, [2.0, 5.0]);
    let (value, (dw, dxs)) = weighted_log_likelihood_grad(w, &xs).expect("positive entries");
    // f = w Σ ln x_i: df/dw = Σ ln x_i, df/dx_i = w / x_i.
    let sum_ln = xs.iter().map(|x| x.ln()).sum::<f64>();
    assert_relative_eq!(value, w * sum_ln, max_relative = 1e-15);
    assert_relative_eq!(dw, sum_ln, max_relative = 1e-15);
    assert_relative_eq!(dxs[0], w / xs[0], max_relative = 1e-15);
    assert_relative_eq!(dxs[1], w / xs[1], max_relative = 1e-15);
}

#[test]
fn option_and_result_locals() {
    // The first positive entry is 2.0: f = x_1², df/dx_1 = 2 x_1, zero elsewhere.
    let (value, gradient) = first_positive_squared_or_mean_grad(&[-1.0, 2.0, 3.0]);
    assert_eq!(value, 4.0);
    assert_eq!(gradient, vec![0.0, 4.0, 0.0]);
    // No positive entry: f = mean, df/dx_i = 1/n.
    let (value, gradient) = first_positive_squared_or_mean_grad(&[-1.0, -2.0]);
    assert_eq!(value, -1.5);
    assert_eq!(gradient, vec![0.5, 0.5]);
}

#[test]
fn option_results() {
    let (value, (da, db)) = ratio_grad(3.0, 2.0).expect("b is not zero");
    // d(a/b)/da = 1/b, d(a/b)/db = −a/b².
    assert_eq!(value, 1.5);
    assert_relative_eq!(da, 0.5, max_relative = 1e-15);
    assert_relative_eq!(db, -0.75, max_relative = 1e-15);
    assert_eq!(ratio_grad(3.0, 0.0), None);
}

#[test]
fn option_parameters() {
    let (value, (dx, dfactor)): (f64, (f64, Option<f64>)) = scaled_grad(2.0, Some(3.0));
    // x f²: d/dx = f², d/df = 2 x f.
    assert_eq!(value, 18.0);
    assert_eq!((dx, dfactor), (9.0, Some(12.0)));
    let (value, (dx, dfactor)) = scaled_grad(2.0, None);
    assert_eq!((value, dx, dfactor), (2.0, 1.0, None));
}

#[test]
fn aliases_of_result() {
    let (value, dx) = checked_sqrt_grad(4.0).expect("non-negative");
    // d√x/dx = 1/(2√x).
    assert_eq!(value, 2.0);
    assert_relative_eq!(dx, 0.25, max_relative = 1e-15);
    let error = checked_sqrt_grad(-1.0).expect_err("negative");
    assert_eq!(error.to_string(), "negative");
}

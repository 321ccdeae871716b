//! The gradient-descent solver of particle and saddle (gradbench's `cpp/gradbench/gd.hpp`,
//! which every tool of those evals uses), written over any scalar so that a differentiated
//! function can run it and be differentiated through it.

use ad::Real;

/// The point near `start` where `objective` is least, by gradient descent with the step
/// control of gradbench's `multivariate_argmin`: stop when the gradient or the step is below
/// 1e-5, double the step after 10 successful ones, halve it after a failed one.
pub fn argmin<S: Real, const N: usize>(
    start: [S; N],
    objective: impl Fn([S; N]) -> S,
    gradient: impl Fn([S; N]) -> [S; N],
) -> [S; N] {
    let mut x = start;
    let mut fx = objective(x);
    let mut gx = gradient(x);
    let mut successes = 0;
    let mut eta = 1e-5;
    loop {
        if magnitude(gx) <= 1e-5 {
            return x;
        } else if successes == 10 {
            eta *= 2.0;
            successes = 0;
        } else {
            let next: [S; N] = std::array::from_fn(|j| x[j] - gx[j] * eta);
            let step: [S; N] = std::array::from_fn(|j| x[j] - next[j]);
            if magnitude(step) <= 1e-5 {
                return x;
            }
            let f_next = objective(next);
            if f_next < fx {
                x = next;
                fx = f_next;
                gx = gradient(x);
                successes += 1;
            } else {
                eta /= 2.0;
                successes = 0;
            }
        }
    }
}

/// The point near `start` where `objective` is greatest: [`argmin`] of its negation.
pub fn argmax<S: Real, const N: usize>(
    start: [S; N],
    objective: impl Fn([S; N]) -> S,
    gradient: impl Fn([S; N]) -> [S; N],
) -> [S; N] {
    argmin(start, |x| -objective(x), |x| gradient(x).map(|g| -g))
}

/// The Euclidean norm.
fn magnitude<S: Real, const N: usize>(v: [S; N]) -> S {
    v.iter()
        .fold(S::from_f64(0.0), |acc, &x| acc + x * x)
        .sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_minimum_of_a_bowl() {
        let x = argmin(
            [1.0, -2.0],
            |x| (x[0] - 0.5).powi(2) + 3.0 * (x[1] + 1.0).powi(2),
            |x| [2.0 * (x[0] - 0.5), 6.0 * (x[1] + 1.0)],
        );
        assert!(
            (x[0] - 0.5).abs() < 1e-4 && (x[1] + 1.0).abs() < 1e-4,
            "{x:?}"
        );
    }
}

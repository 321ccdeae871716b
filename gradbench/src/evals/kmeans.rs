//! kmeans: the k-means cost `Σ_i min_j ‖c_j − p_i‖²` and the Newton direction `J H⁻¹` of one
//! step of Newton's method on it. The Hessian is diagonal (each centroid's coordinates appear
//! only in their own squares), so its product with a vector of ones is its diagonal, and one
//! Hessian–vector product gives both the gradient and the Hessian.

use super::{check, flatten, parse, rows, unknown_function};
use crate::protocol::{Evaluation, Runs};
use ad::reverse_diff;
use serde::Deserialize;
use serde_json::Value;

/// kmeans' input: `n` points and `k` centroids of dimension `d`, as rows.
#[derive(Deserialize)]
struct Input {
    points: Vec<Vec<f64>>,
    centroids: Vec<Vec<f64>>,
}

/// `Σ_i min_j ‖c_j − p_i‖²`: `centroids` and `points` are rows of `d` coordinates.
///
/// The nearest centroid is chosen on the values ([`nearest`]), as a comparison would be: the
/// choice passes no derivative, so the tape records only the distance to the chosen centroid,
/// one per point, not the `k` distances compared.
#[reverse_diff]
pub fn kmeans_cost(centroids: &[f64], #[no_grad] points: &[f64], d: usize) -> f64 {
    let mut cost = 0.0;
    for point in points.chunks_exact(d) {
        let j = nearest(centroids, point);
        let centroid = &centroids[j * d..(j + 1) * d];
        cost += centroid
            .iter()
            .zip(point)
            .map(|(c, p)| (c - p) * (c - p))
            .sum::<f64>();
    }
    cost
}

/// The index of the centroid nearest to `point` (the first of equals, as `std::min` keeps),
/// compared on the values of any scalar type.
fn nearest<S: ad::Real>(centroids: &[S], point: &[f64]) -> usize {
    let mut closest = (f64::INFINITY, 0);
    for (j, centroid) in centroids.chunks_exact(point.len()).enumerate() {
        let distance: f64 = centroid
            .iter()
            .zip(point)
            .map(|(c, p)| (c.value() - p) * (c.value() - p))
            .sum();
        if distance < closest.0 {
            closest = (distance, j);
        }
    }
    closest.1
}

/// The Newton direction `J H⁻¹ = ∇f / diag(H)` (Newton's method moves the centroids by minus
/// it), with the gradient and `H·1 = diag(H)` from `kmeans_cost_hvp`.
pub fn newton_direction(centroids: &[f64], points: &[f64], d: usize) -> Vec<f64> {
    let ones = vec![1.0; centroids.len()];
    let (_, gradient, diagonal) = kmeans_cost_hvp(centroids, points, d, &ones);
    gradient.iter().zip(&diagonal).map(|(g, h)| g / h).collect()
}

/// kmeans' functions: the `cost` and the Newton direction `dir`.
pub fn evaluate(function: &str, input: Value) -> Result<Evaluation, String> {
    let (input, runs): (Input, Runs) = parse(input)?;
    let d = input.points.first().map_or(0, Vec::len);
    check(d > 0, || "`points` is empty or its rows are".to_string())?;
    let points = flatten("points", &input.points, None, d)?;
    let centroids = flatten("centroids", &input.centroids, None, d)?;
    check(!centroids.is_empty(), || "`centroids` is empty".to_string())?;
    match function {
        "cost" => Ok(runs.evaluate(|| kmeans_cost(&centroids, &points, d))),
        "dir" => {
            let (direction, timings) = runs.measure(|| newton_direction(&centroids, &points, d));
            Ok(Evaluation::new(rows(&direction, d), timings))
        }
        _ => Err(unknown_function("kmeans", function, &["cost", "dir"])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Newton's step moves each centroid to the mean of its points: the direction is
    /// `c_j − mean_j` (k-means' update, as gradbench's reference computes it).
    #[test]
    fn direction_leads_to_the_cluster_means() {
        let points = [0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 10.0, 10.0, 12.0, 10.0];
        let centroids = [0.5, 0.5, 11.0, 9.0];
        let direction = newton_direction(&centroids, &points, 2);
        let expected = [0.5 - 1.0 / 3.0, 0.5 - 2.0 / 3.0, 11.0 - 11.0, 9.0 - 10.0];
        for (got, want) in direction.iter().zip(expected) {
            assert!(
                (got - want).abs() < 1e-12,
                "{direction:?} against {expected:?}"
            );
        }
    }
}

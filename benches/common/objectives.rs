//! The benchmark functions as [`Objective`]s: written once over any [`Scalar`], with the
//! differentiable inputs in one flat slice and the constant data in `self`. The peers run these;
//! `ad` runs the `#[reverse_diff]` versions in `benches/suite/annotated.rs`, which perform the
//! same operations in the same order.

// Index loops, as in ADBench's reference implementation, keep the two versions of each
// function visibly the same operation for operation.
#![allow(clippy::needless_range_loop)]

use super::scalar::Scalar;

/// A function written once for every peer: its differentiable inputs in one flat slice, its
/// constant data in `self`.
pub trait Objective {
    /// The function's value at `inputs`.
    fn eval<S: Scalar>(&self, inputs: &[S]) -> S;
}

/// The sum of an iterator of at least one scalar (the peers have no zero without a tape).
pub fn sum<S: Scalar>(terms: impl IntoIterator<Item = S>) -> S {
    terms
        .into_iter()
        .reduce(|total, term| total + term)
        .expect("at least one term")
}

// --- scalar multiplication --------------------------------------------------------------------

/// `scalar_mult` on `[x, y]`.
pub struct ScalarMult;

impl Objective for ScalarMult {
    fn eval<S: Scalar>(&self, p: &[S]) -> S {
        p[0] * p[1]
    }
}

// --- dot product ------------------------------------------------------------------------------

/// `dot` on `x` followed by `y`.
pub struct Dot;

impl Objective for Dot {
    fn eval<S: Scalar>(&self, p: &[S]) -> S {
        let (x, y) = p.split_at(p.len() / 2);
        sum(x.iter().zip(y).map(|(&a, &b)| a * b))
    }
}

// --- sum of a matrix–vector product -----------------------------------------------------------

/// `matvec_sum` on `a` (row after row) followed by `x`.
pub struct MatvecSum {
    /// The size `n`.
    pub n: usize,
}

impl Objective for MatvecSum {
    fn eval<S: Scalar>(&self, p: &[S]) -> S {
        let n = self.n;
        let (a, x) = p.split_at(n * n);
        sum((0..n).map(|i| sum((0..n).map(|j| a[i * n + j] * x[j]))))
    }
}

// --- rotate_vec_by_quat -----------------------------------------------------------------------

/// `rotated_sum` on `[qx, qy, qz, qw, vx, vy, vz]`.
pub struct RotatedSum;

impl Objective for RotatedSum {
    fn eval<S: Scalar>(&self, p: &[S]) -> S {
        let dot3 = |a: [S; 3], b: [S; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        let (u, s, v) = ([p[0], p[1], p[2]], p[3], [p[4], p[5], p[6]]);
        let along_u = dot3(u, v).scale(2.0);
        let along_v = s * s - dot3(u, u);
        let u_cross_v = [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ];
        let r: Vec<S> = (0..3)
            .map(|i| along_u * u[i] + along_v * v[i] + s.scale(2.0) * u_cross_v[i])
            .collect();
        r[0] + r[1] + r[2]
    }
}

// --- extended Rosenbrock ----------------------------------------------------------------------

/// `rosenbrock`.
pub struct Rosenbrock;

impl Objective for Rosenbrock {
    fn eval<S: Scalar>(&self, x: &[S]) -> S {
        sum((0..x.len() - 1).map(|i| {
            let d = x[i + 1] - x[i] * x[i];
            let e = x[i].subtract_from(1.0);
            (d * d).scale(100.0) + e * e
        }))
    }
}

// --- MLP loss ---------------------------------------------------------------------------------

/// Inputs per sample of the MLP.
pub const MLP_INPUTS: usize = 16;
/// Hidden units of the MLP (`tanh`, or ReLU).
pub const MLP_HIDDEN: usize = 32;
/// Samples per batch.
pub const MLP_BATCH: usize = 64;
/// The number of weights: `w1` (hidden × inputs, row after row), `b1`, `w2`, `b2`.
pub const MLP_WEIGHTS: usize = MLP_HIDDEN * MLP_INPUTS + MLP_HIDDEN + MLP_HIDDEN + 1;

/// `mlp_loss` (or `mlp_relu_loss`) with its batch as constant data.
pub struct MlpLoss {
    /// `MLP_BATCH` samples of `MLP_INPUTS` numbers, sample after sample.
    pub inputs: Vec<f64>,
    /// One target per sample.
    pub targets: Vec<f64>,
    /// Whether the hidden units are ReLUs (`max(pre, 0)`) rather than `tanh`.
    pub relu: bool,
}

impl Objective for MlpLoss {
    fn eval<S: Scalar>(&self, weights: &[S]) -> S {
        let (w1, rest) = weights.split_at(MLP_HIDDEN * MLP_INPUTS);
        let (b1, rest) = rest.split_at(MLP_HIDDEN);
        let (w2, b2) = rest.split_at(MLP_HIDDEN);
        let total = sum((0..MLP_BATCH).map(|b| {
            let x = &self.inputs[b * MLP_INPUTS..(b + 1) * MLP_INPUTS];
            let mut output = b2[0];
            for j in 0..MLP_HIDDEN {
                let mut pre = b1[j];
                for k in 0..MLP_INPUTS {
                    pre = pre + w1[j * MLP_INPUTS + k].scale(x[k]);
                }
                let unit = if self.relu { pre.relu() } else { pre.tanh() };
                output = output + w2[j] * unit;
            }
            let residual = output.shift(-self.targets[b]);
            residual * residual
        }));
        total.scale(1.0 / MLP_BATCH as f64)
    }
}

// --- the sharing chain ------------------------------------------------------------------------

/// `chain` on `[x]`.
pub struct Chain {
    /// The number of steps `n`.
    pub steps: usize,
    /// The constant factor `c`.
    pub factor: f64,
}

impl Objective for Chain {
    fn eval<S: Scalar>(&self, p: &[S]) -> S {
        let mut x = p[0];
        for _ in 0..self.steps {
            x = x + x.scale(self.factor);
        }
        x
    }
}

// --- ADBench's GMM objective (definition in ../shared/ADBENCH.md) -----------------------

/// A GMM instance read from ADBench's text format: `d K n`, α (K), μ (K rows of d), icf (K rows
/// of d(d+1)/2), the points (n rows of d), then `γ m`.
pub struct GmmData {
    /// The dimension of a point.
    pub d: usize,
    /// The number of mixture components.
    pub k: usize,
    /// The points, one after the other.
    pub points: Vec<f64>,
    /// The Wishart prior's scale γ.
    pub gamma: f64,
    /// The Wishart prior's degrees of freedom beyond `d + 1`.
    pub m: usize,
    /// The starting parameters: α, then μ, then icf, each as laid out in the file.
    pub parameters: Vec<f64>,
}

impl GmmData {
    /// Reads an instance. The format is whitespace-separated numbers, so the line structure
    /// is not checked here; `tests/adbench` holds the strict reader.
    pub fn parse(text: &str) -> Result<GmmData, String> {
        let mut numbers = text.split_whitespace().map(|token| {
            token
                .parse::<f64>()
                .map_err(|_| format!("`{token}` is not a number"))
        });
        let mut next = || {
            numbers
                .next()
                .unwrap_or(Err("the file ends early".to_string()))
        };
        let count = |value: f64| -> Result<usize, String> {
            if value.fract() == 0.0 && value >= 0.0 {
                Ok(value as usize)
            } else {
                Err(format!("{value} is not a count"))
            }
        };
        let (d, k, n) = (count(next()?)?, count(next()?)?, count(next()?)?);
        let parameter_count = k * (d + 1) * (d + 2) / 2;
        let parameters = (0..parameter_count)
            .map(|_| next())
            .collect::<Result<_, _>>()?;
        let points = (0..n * d).map(|_| next()).collect::<Result<_, _>>()?;
        let gamma = next()?;
        let m = count(next()?)?;
        Ok(GmmData {
            d,
            k,
            points,
            gamma,
            m,
            parameters,
        })
    }

    /// The number of points.
    pub fn n(&self) -> usize {
        self.points.len() / self.d
    }

    /// The constant part of the objective, `−(n d / 2) ln 2π − K·C` (see ADBENCH.md).
    pub fn constant(&self) -> f64 {
        gmm_constant(self.d, self.k, self.n(), self.gamma, self.m)
    }
}

/// `ln Γ(a)` for `a` a positive whole or half-whole number (all the arguments the GMM prior
/// needs): `Γ(j) = (j − 1)!` and `Γ(j + ½) = Γ(½) ∏_{i<j} (i + ½)` with `Γ(½) = √π`.
fn ln_gamma_half_integer(a: f64) -> f64 {
    assert!(
        a > 0.0 && (2.0 * a).fract() == 0.0,
        "{a} is not a half-integer"
    );
    let (mut x, mut log) = if a.fract() == 0.0 {
        (1.0, 0.0)
    } else {
        (0.5, std::f64::consts::PI.sqrt().ln())
    };
    while x < a {
        log += x.ln();
        x += 1.0;
    }
    log
}

/// `−(n d / 2) ln 2π − K·C` with `C = ν d (ln γ − ½ ln 2) − ln Γ_d(ν/2)`, `ν = d + m + 1`.
fn gmm_constant(d: usize, k: usize, n: usize, gamma: f64, m: usize) -> f64 {
    let (d_f, nu) = (d as f64, (d + m + 1) as f64);
    let ln_multigamma = 0.25 * d_f * (d_f - 1.0) * std::f64::consts::PI.ln()
        + (1..=d)
            .map(|j| ln_gamma_half_integer(0.5 * nu + (1.0 - j as f64) / 2.0))
            .sum::<f64>();
    let c = nu * d_f * (gamma.ln() - 0.5 * 2f64.ln()) - ln_multigamma;
    -(n as f64 * d_f / 2.0) * (2.0 * std::f64::consts::PI).ln() - k as f64 * c
}

/// `gmm_objective` on `α, μ, icf` in one slice.
pub struct Gmm<'a> {
    /// The instance (its points, `d`, γ, m; its parameters are not used here).
    pub data: &'a GmmData,
    /// [`GmmData::constant`], computed once.
    pub constant: f64,
}

impl Objective for Gmm<'_> {
    fn eval<S: Scalar>(&self, p: &[S]) -> S {
        let GmmData { d, k, gamma, m, .. } = *self.data;
        let points = &self.data.points;
        let n = points.len() / d;
        let tri = d * (d + 1) / 2;
        let (alphas, rest) = p.split_at(k);
        let (means, icf) = rest.split_at(k * d);
        let q = |c: usize, j: usize| icf[c * tri + j];
        let diagonals: Vec<S> = (0..k * d).map(|i| q(i / d, i % d).exp()).collect();
        let sum_q: Vec<S> = (0..k).map(|c| sum((0..d).map(|j| q(c, j)))).collect();
        let log_sum_exp = |terms: &[S]| {
            let largest = terms.iter().map(|t| t.value()).fold(f64::MIN, f64::max);
            sum(terms.iter().map(|t| t.shift(-largest).exp()))
                .ln()
                .shift(largest)
        };
        let mut betas = Vec::with_capacity(k);
        let sum_lse = sum((0..n).map(|i| {
            betas.clear();
            for c in 0..k {
                let centred: Vec<S> = (0..d)
                    .map(|j| means[c * d + j].subtract_from(points[i * d + j]))
                    .collect();
                let mut z: Vec<S> = (0..d).map(|j| diagonals[c * d + j] * centred[j]).collect();
                let mut l = c * tri + d;
                for col in 0..d {
                    for row in col + 1..d {
                        z[row] = z[row] + icf[l] * centred[col];
                        l += 1;
                    }
                }
                let norm = sum(z.iter().map(|&zj| zj * zj));
                betas.push(alphas[c] + sum_q[c] - norm.scale(0.5));
            }
            log_sum_exp(&betas)
        }));
        let prior = sum((0..k).map(|c| {
            let squares = sum((0..d)
                .map(|j| diagonals[c * d + j] * diagonals[c * d + j])
                .chain((c * tri + d..(c + 1) * tri).map(|l| icf[l] * icf[l])));
            squares.scale(0.5 * gamma * gamma) - sum_q[c].scale(m as f64)
        }));
        (sum_lse - log_sum_exp(alphas).scale(n as f64) + prior).shift(self.constant)
    }
}

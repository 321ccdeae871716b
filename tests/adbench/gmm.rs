//! GMM: the log-likelihood of a Gaussian mixture model with a Wishart prior on the inverse
//! covariances, in ADBench's sign convention (see the module docs of `adbench`).

use super::reader::{parse_count, parse_number, ReadError, Rows};
use super::SplitMix64;
use ad::reverse_diff;

/// A GMM instance: the parameters (α, μ, icf), the data points and the prior.
#[derive(Debug, Clone, PartialEq)]
pub struct GmmInput {
    /// The dimension of the points.
    pub d: usize,
    /// The number of components.
    pub k: usize,
    /// The number of points.
    pub n: usize,
    /// The component weights (log scale), `k` numbers.
    pub alphas: Vec<f64>,
    /// The means, `k` rows of `d`.
    pub means: Vec<f64>,
    /// The inverse covariance factors, `k` rows of `d(d+1)/2`: `q` (the log diagonal, `d`
    /// numbers) then `l` (below the diagonal, column by column).
    pub icf: Vec<f64>,
    /// The points, `n` rows of `d`.
    pub x: Vec<f64>,
    /// The Wishart prior's γ.
    pub gamma: f64,
    /// The Wishart prior's m.
    pub m: usize,
}

impl GmmInput {
    /// The number of gradient entries, `K(d+1)(d+2)/2`.
    pub fn parameter_count(&self) -> usize {
        self.alphas.len() + self.means.len() + self.icf.len()
    }

    /// The objective at this instance's parameters.
    pub fn objective(&self) -> f64 {
        self.objective_at(&self.alphas, &self.means, &self.icf)
    }

    /// The objective at other parameters (same layout), the data and prior of this instance.
    pub fn objective_at(&self, alphas: &[f64], means: &[f64], icf: &[f64]) -> f64 {
        gmm_objective(
            alphas, means, icf, &self.x, self.d, self.k, self.n, self.gamma, self.m,
        )
    }

    /// The objective and its gradient with respect to (α, μ, icf), concatenated in that order.
    pub fn objective_and_gradient(&self) -> (f64, Vec<f64>) {
        let ((likelihood, prior), (d_alphas, d_means, d_icf)) = gmm_likelihood_and_prior_vjp(
            &self.alphas,
            &self.means,
            &self.icf,
            &self.x,
            self.d,
            self.k,
            self.n,
            self.gamma,
            self.m,
            &(1.0, 1.0),
        );
        let constant = self.k as f64 * wishart_constant(self.d, self.gamma, self.m);
        (
            likelihood + prior - constant,
            [d_alphas, d_means, d_icf].concat(),
        )
    }

    /// The parameters (α, μ, icf) as one vector, the layout of the gradient.
    pub fn parameters(&self) -> Vec<f64> {
        [
            self.alphas.as_slice(),
            self.means.as_slice(),
            self.icf.as_slice(),
        ]
        .concat()
    }

    /// The objective at a concatenated parameter vector (the layout of [`Self::parameters`]).
    pub fn objective_at_parameters(&self, parameters: &[f64]) -> f64 {
        let (alphas, rest) = parameters.split_at(self.k);
        let (means, icf) = rest.split_at(self.k * self.d);
        self.objective_at(alphas, means, icf)
    }
}

/// Reads a GMM file: `d K n`, α (K lines of 1), μ (K rows of d), icf (K rows of d(d+1)/2),
/// x (n rows of d), then `γ m`.
pub fn read_gmm(text: &str) -> Result<GmmInput, ReadError> {
    let mut rows = Rows::new(text);
    let header = rows.header(&["d", "K", "n"])?;
    let (d, k, n) = (header[0], header[1], header[2]);
    let alphas = rows.matrix(k, 1, "alpha")?;
    let means = rows.matrix(k, d, "mu")?;
    let icf = rows.matrix(k, d * (d + 1) / 2, "icf")?;
    let x = rows.matrix(n, d, "x")?;
    let prior = || "the Wishart prior `gamma m`".to_string();
    let (line, tokens) = rows.tokens(2, prior)?;
    let gamma = parse_number(line, tokens[0], || "gamma in `gamma m`".to_string())?;
    let m = parse_count(line, tokens[1], 0, || "m in `gamma m`".to_string())?;
    rows.finish("the Wishart prior `gamma m`")?;
    Ok(GmmInput {
        d,
        k,
        n,
        alphas,
        means,
        icf,
        x,
        gamma,
        m,
    })
}

/// A random instance drawn the way ADBench's generator draws them: α, icf and the points
/// standard normal, the means uniform on [0, 1), γ = 1 and m = 0; the same for the same `seed`.
pub fn generate_gmm(d: usize, k: usize, n: usize, seed: u64) -> GmmInput {
    let mut random = SplitMix64::new(seed);
    let mut normals = |count: usize| (0..count).map(|_| random.normal()).collect::<Vec<_>>();
    let alphas = normals(k);
    let icf = normals(k * d * (d + 1) / 2);
    let x = normals(n * d);
    let means = (0..k * d).map(|_| random.uniform()).collect();
    GmmInput {
        d,
        k,
        n,
        alphas,
        means,
        icf,
        x,
        gamma: 1.0,
        m: 0,
    }
}

/// The GMM objective
/// `F = −(nd/2) ln 2π + Σ_i LSE_k(β_ik) − n·LSE(α) + W`, with
/// `β_ik = α_k + Σ_j q_kj − ½‖Q_k (x_i − μ_k)‖²` and the Wishart prior `W`.
///
/// `alphas`: K; `means`: K rows of d; `icf`: K rows of d(d+1)/2; `x`: n rows of d.
#[allow(clippy::too_many_arguments)] // ADBench's signature: three parameters, six data
pub fn gmm_objective(
    alphas: &[f64],
    means: &[f64],
    icf: &[f64],
    x: &[f64],
    d: usize,
    k: usize,
    n: usize,
    gamma: f64,
    m: usize,
) -> f64 {
    let (likelihood, prior) = gmm_likelihood_and_prior(alphas, means, icf, x, d, k, n, gamma, m);
    likelihood + prior - k as f64 * wishart_constant(d, gamma, m)
}

/// The two terms of [`gmm_objective`], computed together since both need `exp(q)`: the
/// log-likelihood `−(nd/2) ln 2π + Σ_i LSE_k(β_ik) − n·LSE(α)` and the Wishart prior `W` but
/// for its constant `−K·C` ([`wishart_constant`]), which the callers add. ADBench adds the two
/// terms (its gradient is this function's `_vjp` with the cotangent `(1, 1)`); gradbench's copy
/// of the objective subtracts `W` (its `log_wishart_prior` returns `−W`), so its gradient is the
/// `_vjp` with `(1, −1)`.
///
/// Written as loops over indices, so that `#[reverse_diff]` writes its adjoint out (README,
/// "Loops over arrays: adjoints written out"). `LSE(v) = max(v) + ln Σ_j exp(v_j − max(v))`,
/// the maximum one of the `v_j` as in ADBench's C++; the derivative through it,
/// `1 − Σ_j softmax(v)_j`, is 0 up to rounding. The Wishart prior is
/// `W = Σ_k [½γ² (Σ_j exp(q_kj)² + Σ l_k²) − m Σ_j q_kj] − K·C`.
// As gmm_objective; and index loops are the shape whose adjoint is written out.
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
#[reverse_diff]
pub fn gmm_likelihood_and_prior(
    alphas: &[f64],
    means: &[f64],
    icf: &[f64],
    #[no_grad] x: &[f64],
    d: usize,
    k: usize,
    n: usize,
    #[no_grad] gamma: f64,
    m: usize,
) -> (f64, f64) {
    let icf_size = d * (d + 1) / 2;
    // Per component: Σ_j q_kj and the diagonal of Q_k, exp(q_kj).
    let mut sum_q = vec![0.0; k];
    let mut diagonals = vec![0.0; k * d];
    for component in 0..k {
        for j in 0..d {
            sum_q[component] += icf[component * icf_size + j];
            diagonals[component * d + j] = icf[component * icf_size + j].exp();
        }
    }

    // The sum over points is preaccumulated a block of points at a time (`ad::checkpoint::sum`):
    // each block's adjoint runs as soon as the block is computed, while its values are in
    // cache, so the stack (or the tape) holds one block's, not all n points'. The block's
    // arrays are its own, written before they are read.
    let block = points_per_term(d, k);
    let total = ad::checkpoint::sum(n.div_ceil(block), |b| {
        let mut centred = vec![0.0; d];
        let mut transformed = vec![0.0; d];
        let mut beta = vec![0.0; k];
        let mut total = 0.0;
        for i in b * block..n.min((b + 1) * block) {
            for component in 0..k {
                for j in 0..d {
                    centred[j] = x[i * d + j] - means[component * d + j];
                }
                // Q (x − μ): the diagonal, then L column by column (ADBench's `Qtimesx`).
                for j in 0..d {
                    transformed[j] = diagonals[component * d + j] * centred[j];
                }
                for column in 0..d {
                    let l = component * icf_size + d + column * (2 * d - column - 1) / 2;
                    for row in column + 1..d {
                        transformed[row] += icf[l + row - column - 1] * centred[column];
                    }
                }
                let mut squared_norm = 0.0;
                for j in 0..d {
                    squared_norm += transformed[j] * transformed[j];
                }
                beta[component] = alphas[component] + sum_q[component] - 0.5 * squared_norm;
            }
            // LSE_k(β_ik).
            let mut largest = beta[0];
            for component in 1..k {
                if beta[component] > largest {
                    largest = beta[component];
                }
            }
            let mut sum = 0.0;
            for component in 0..k {
                sum += (beta[component] - largest).exp();
            }
            total += largest + sum.ln();
        }

        total
    });

    // LSE(α).
    let mut largest_alpha = alphas[0];
    for component in 1..k {
        if alphas[component] > largest_alpha {
            largest_alpha = alphas[component];
        }
    }
    let mut sum_alpha = 0.0;
    for component in 0..k {
        sum_alpha += (alphas[component] - largest_alpha).exp();
    }

    // W's terms: the squared Frobenius norms of the Q_k and the Σ_j q_kj.
    let mut frobenius = 0.0;
    let mut all_q = 0.0;
    for component in 0..k {
        for j in 0..d {
            frobenius += diagonals[component * d + j] * diagonals[component * d + j];
        }
        for j in component * icf_size + d..(component + 1) * icf_size {
            frobenius += icf[j] * icf[j];
        }
        all_q += sum_q[component];
    }

    let constant = -((n * d) as f64) / 2.0 * (2.0 * std::f64::consts::PI).ln();
    (
        constant + total - n as f64 * (largest_alpha + sum_alpha.ln()),
        0.5 * gamma * gamma * frobenius - m as f64 * all_q,
    )
}

/// How many points a term of the preaccumulated sum over points takes: enough that a term's
/// values on the stack of the adjoint written out fill about 256 KB (a quarter of this
/// machine's 1 MB of L2 cache a core), at least one. A (point, component) keeps `2d + 2` values
/// (the runs of `centred` and `transformed`, the norm and `β`), and a point about `2K` more (the
/// log-sum-exp's maximum, sum and branches), 8 bytes each.
fn points_per_term(d: usize, k: usize) -> usize {
    let bytes_per_point = 8 * k * (2 * d + 4);
    (256 * 1024 / bytes_per_point).max(1)
}

/// `C = ν·d·(ln γ − ½ ln 2) − ln Γ_d(ν/2)` with `ν = d + m + 1`: a constant of the objective.
pub fn wishart_constant(d: usize, gamma: f64, m: usize) -> f64 {
    let nu = (d + m + 1) as f64;
    nu * d as f64 * (gamma.ln() - 0.5 * 2f64.ln()) - ln_multivariate_gamma(0.5 * nu, d)
}

/// `ln Γ_d(a) = ¼ d(d−1) ln π + Σ_{j=1..d} lgamma(a + (1 − j)/2)`.
pub fn ln_multivariate_gamma(a: f64, d: usize) -> f64 {
    let d_real = d as f64;
    0.25 * d_real * (d_real - 1.0) * std::f64::consts::PI.ln()
        + (1..=d)
            .map(|j| ln_gamma(a + 0.5 * (1.0 - j as f64)))
            .sum::<f64>()
}

/// `ln |Γ(x)|` by the Lanczos approximation (g = 7, 9 coefficients; relative error about
/// 1e-15), with the reflection formula below ½. `f64::ln_gamma` is not stable in std.
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const COEFFICIENTS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    use std::f64::consts::PI;
    if x < 0.5 {
        // Γ(x) Γ(1 − x) = π / sin(πx).
        return (PI / (PI * x).sin().abs()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + G + 0.5;
    let series = COEFFICIENTS[1..]
        .iter()
        .enumerate()
        .fold(COEFFICIENTS[0], |sum, (i, c)| {
            sum + c / (x + (i + 1) as f64)
        });
    0.5 * (2.0 * PI).ln() + (x + 0.5) * t.ln() - t + series.ln()
}

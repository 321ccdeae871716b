//! Written by `generate.py`: the suite's GMM with each beta one expression (see `main.rs`).
#![allow(clippy::needless_range_loop)]

use ad::reverse_diff;

/// `gmm_objective` at d = 2 or 10, each beta one expression.
#[reverse_diff]
#[allow(clippy::too_many_arguments)]
pub fn gmm_fused(
    alphas: &[f64],
    means: &[f64],
    icf: &[f64],
    #[no_grad] points: &[f64],
    d: usize,
    #[no_grad] gamma: f64,
    m: usize,
    #[no_grad] constant: f64,
) -> f64 {
    let k = alphas.len();
    let n = points.len() / d;
    let tri = d * (d + 1) / 2;
    let mut diagonals: Vec<f64> = Vec::with_capacity(k * d);
    let mut sum_q: Vec<f64> = Vec::with_capacity(k);
    for c in 0..k {
        let mut total = 0.0;
        for j in 0..d {
            total += icf[c * tri + j];
            diagonals.push(icf[c * tri + j].exp());
        }
        sum_q.push(total);
    }
    let mut betas: Vec<f64> = vec![0.0; k];
    let mut sum_lse = 0.0;
    for i in 0..n {
        if d == 2 {
            let p = [points[i * 2 + 0], points[i * 2 + 1]];
            for c in 0..k {
                betas[c] = alphas[c] + sum_q[c]
                    - 0.5
                        * ((diagonals[c * 2 + 0] * (p[0] - means[c * 2 + 0])).powi(2)
                            + (diagonals[c * 2 + 1] * (p[1] - means[c * 2 + 1])
                                + icf[c * 3 + 2] * (p[0] - means[c * 2 + 0]))
                                .powi(2));
            }
        } else if d == 10 {
            let p = [
                points[i * 10 + 0],
                points[i * 10 + 1],
                points[i * 10 + 2],
                points[i * 10 + 3],
                points[i * 10 + 4],
                points[i * 10 + 5],
                points[i * 10 + 6],
                points[i * 10 + 7],
                points[i * 10 + 8],
                points[i * 10 + 9],
            ];
            for c in 0..k {
                betas[c] = alphas[c] + sum_q[c]
                    - 0.5
                        * ((diagonals[c * 10 + 0] * (p[0] - means[c * 10 + 0])).powi(2)
                            + (diagonals[c * 10 + 1] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 10] * (p[0] - means[c * 10 + 0]))
                                .powi(2)
                            + (diagonals[c * 10 + 2] * (p[2] - means[c * 10 + 2])
                                + icf[c * 55 + 11] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 19] * (p[1] - means[c * 10 + 1]))
                                .powi(2)
                            + (diagonals[c * 10 + 3] * (p[3] - means[c * 10 + 3])
                                + icf[c * 55 + 12] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 20] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 27] * (p[2] - means[c * 10 + 2]))
                                .powi(2)
                            + (diagonals[c * 10 + 4] * (p[4] - means[c * 10 + 4])
                                + icf[c * 55 + 13] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 21] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 28] * (p[2] - means[c * 10 + 2])
                                + icf[c * 55 + 34] * (p[3] - means[c * 10 + 3]))
                                .powi(2)
                            + (diagonals[c * 10 + 5] * (p[5] - means[c * 10 + 5])
                                + icf[c * 55 + 14] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 22] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 29] * (p[2] - means[c * 10 + 2])
                                + icf[c * 55 + 35] * (p[3] - means[c * 10 + 3])
                                + icf[c * 55 + 40] * (p[4] - means[c * 10 + 4]))
                                .powi(2)
                            + (diagonals[c * 10 + 6] * (p[6] - means[c * 10 + 6])
                                + icf[c * 55 + 15] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 23] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 30] * (p[2] - means[c * 10 + 2])
                                + icf[c * 55 + 36] * (p[3] - means[c * 10 + 3])
                                + icf[c * 55 + 41] * (p[4] - means[c * 10 + 4])
                                + icf[c * 55 + 45] * (p[5] - means[c * 10 + 5]))
                                .powi(2)
                            + (diagonals[c * 10 + 7] * (p[7] - means[c * 10 + 7])
                                + icf[c * 55 + 16] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 24] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 31] * (p[2] - means[c * 10 + 2])
                                + icf[c * 55 + 37] * (p[3] - means[c * 10 + 3])
                                + icf[c * 55 + 42] * (p[4] - means[c * 10 + 4])
                                + icf[c * 55 + 46] * (p[5] - means[c * 10 + 5])
                                + icf[c * 55 + 49] * (p[6] - means[c * 10 + 6]))
                                .powi(2)
                            + (diagonals[c * 10 + 8] * (p[8] - means[c * 10 + 8])
                                + icf[c * 55 + 17] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 25] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 32] * (p[2] - means[c * 10 + 2])
                                + icf[c * 55 + 38] * (p[3] - means[c * 10 + 3])
                                + icf[c * 55 + 43] * (p[4] - means[c * 10 + 4])
                                + icf[c * 55 + 47] * (p[5] - means[c * 10 + 5])
                                + icf[c * 55 + 50] * (p[6] - means[c * 10 + 6])
                                + icf[c * 55 + 52] * (p[7] - means[c * 10 + 7]))
                                .powi(2)
                            + (diagonals[c * 10 + 9] * (p[9] - means[c * 10 + 9])
                                + icf[c * 55 + 18] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 26] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 33] * (p[2] - means[c * 10 + 2])
                                + icf[c * 55 + 39] * (p[3] - means[c * 10 + 3])
                                + icf[c * 55 + 44] * (p[4] - means[c * 10 + 4])
                                + icf[c * 55 + 48] * (p[5] - means[c * 10 + 5])
                                + icf[c * 55 + 51] * (p[6] - means[c * 10 + 6])
                                + icf[c * 55 + 53] * (p[7] - means[c * 10 + 7])
                                + icf[c * 55 + 54] * (p[8] - means[c * 10 + 8]))
                                .powi(2));
            }
        } else {
            panic!("d = {d} is not generated");
        }
        let mut largest = betas[0].value();
        for beta in &betas {
            largest = largest.max(beta.value());
        }
        let mut total = 0.0;
        for beta in &betas {
            total += (*beta - largest).exp();
        }
        sum_lse += total.ln() + largest;
    }
    let mut largest = alphas[0].value();
    for alpha in alphas {
        largest = largest.max(alpha.value());
    }
    let mut total = 0.0;
    for alpha in alphas {
        total += (*alpha - largest).exp();
    }
    let lse_alphas = total.ln() + largest;
    let mut prior = 0.0;
    for c in 0..k {
        let mut squares = 0.0;
        for j in 0..d {
            squares += diagonals[c * d + j] * diagonals[c * d + j];
        }
        for l in c * tri + d..(c + 1) * tri {
            squares += icf[l] * icf[l];
        }
        prior += 0.5 * gamma * gamma * squares - m as f64 * sum_q[c];
    }
    sum_lse - n as f64 * lse_alphas + prior + constant
}

/// `gmm_objective` at d = 2 or 10, each beta one expression, the sum over points by `ad::checkpoint::sum`.
#[reverse_diff]
#[allow(clippy::too_many_arguments)]
pub fn gmm_fused_summed(
    alphas: &[f64],
    means: &[f64],
    icf: &[f64],
    #[no_grad] points: &[f64],
    d: usize,
    #[no_grad] gamma: f64,
    m: usize,
    #[no_grad] constant: f64,
) -> f64 {
    let k = alphas.len();
    let n = points.len() / d;
    let tri = d * (d + 1) / 2;
    let mut diagonals: Vec<f64> = Vec::with_capacity(k * d);
    let mut sum_q: Vec<f64> = Vec::with_capacity(k);
    for c in 0..k {
        let mut total = 0.0;
        for j in 0..d {
            total += icf[c * tri + j];
            diagonals.push(icf[c * tri + j].exp());
        }
        sum_q.push(total);
    }

    let sum_lse = ad::checkpoint::sum(n, |i| {
        let mut betas: Vec<f64> = vec![0.0; k];
        if d == 2 {
            let p = [points[i * 2 + 0], points[i * 2 + 1]];
            for c in 0..k {
                betas[c] = alphas[c] + sum_q[c]
                    - 0.5
                        * ((diagonals[c * 2 + 0] * (p[0] - means[c * 2 + 0])).powi(2)
                            + (diagonals[c * 2 + 1] * (p[1] - means[c * 2 + 1])
                                + icf[c * 3 + 2] * (p[0] - means[c * 2 + 0]))
                                .powi(2));
            }
        } else if d == 10 {
            let p = [
                points[i * 10 + 0],
                points[i * 10 + 1],
                points[i * 10 + 2],
                points[i * 10 + 3],
                points[i * 10 + 4],
                points[i * 10 + 5],
                points[i * 10 + 6],
                points[i * 10 + 7],
                points[i * 10 + 8],
                points[i * 10 + 9],
            ];
            for c in 0..k {
                betas[c] = alphas[c] + sum_q[c]
                    - 0.5
                        * ((diagonals[c * 10 + 0] * (p[0] - means[c * 10 + 0])).powi(2)
                            + (diagonals[c * 10 + 1] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 10] * (p[0] - means[c * 10 + 0]))
                                .powi(2)
                            + (diagonals[c * 10 + 2] * (p[2] - means[c * 10 + 2])
                                + icf[c * 55 + 11] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 19] * (p[1] - means[c * 10 + 1]))
                                .powi(2)
                            + (diagonals[c * 10 + 3] * (p[3] - means[c * 10 + 3])
                                + icf[c * 55 + 12] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 20] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 27] * (p[2] - means[c * 10 + 2]))
                                .powi(2)
                            + (diagonals[c * 10 + 4] * (p[4] - means[c * 10 + 4])
                                + icf[c * 55 + 13] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 21] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 28] * (p[2] - means[c * 10 + 2])
                                + icf[c * 55 + 34] * (p[3] - means[c * 10 + 3]))
                                .powi(2)
                            + (diagonals[c * 10 + 5] * (p[5] - means[c * 10 + 5])
                                + icf[c * 55 + 14] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 22] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 29] * (p[2] - means[c * 10 + 2])
                                + icf[c * 55 + 35] * (p[3] - means[c * 10 + 3])
                                + icf[c * 55 + 40] * (p[4] - means[c * 10 + 4]))
                                .powi(2)
                            + (diagonals[c * 10 + 6] * (p[6] - means[c * 10 + 6])
                                + icf[c * 55 + 15] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 23] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 30] * (p[2] - means[c * 10 + 2])
                                + icf[c * 55 + 36] * (p[3] - means[c * 10 + 3])
                                + icf[c * 55 + 41] * (p[4] - means[c * 10 + 4])
                                + icf[c * 55 + 45] * (p[5] - means[c * 10 + 5]))
                                .powi(2)
                            + (diagonals[c * 10 + 7] * (p[7] - means[c * 10 + 7])
                                + icf[c * 55 + 16] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 24] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 31] * (p[2] - means[c * 10 + 2])
                                + icf[c * 55 + 37] * (p[3] - means[c * 10 + 3])
                                + icf[c * 55 + 42] * (p[4] - means[c * 10 + 4])
                                + icf[c * 55 + 46] * (p[5] - means[c * 10 + 5])
                                + icf[c * 55 + 49] * (p[6] - means[c * 10 + 6]))
                                .powi(2)
                            + (diagonals[c * 10 + 8] * (p[8] - means[c * 10 + 8])
                                + icf[c * 55 + 17] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 25] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 32] * (p[2] - means[c * 10 + 2])
                                + icf[c * 55 + 38] * (p[3] - means[c * 10 + 3])
                                + icf[c * 55 + 43] * (p[4] - means[c * 10 + 4])
                                + icf[c * 55 + 47] * (p[5] - means[c * 10 + 5])
                                + icf[c * 55 + 50] * (p[6] - means[c * 10 + 6])
                                + icf[c * 55 + 52] * (p[7] - means[c * 10 + 7]))
                                .powi(2)
                            + (diagonals[c * 10 + 9] * (p[9] - means[c * 10 + 9])
                                + icf[c * 55 + 18] * (p[0] - means[c * 10 + 0])
                                + icf[c * 55 + 26] * (p[1] - means[c * 10 + 1])
                                + icf[c * 55 + 33] * (p[2] - means[c * 10 + 2])
                                + icf[c * 55 + 39] * (p[3] - means[c * 10 + 3])
                                + icf[c * 55 + 44] * (p[4] - means[c * 10 + 4])
                                + icf[c * 55 + 48] * (p[5] - means[c * 10 + 5])
                                + icf[c * 55 + 51] * (p[6] - means[c * 10 + 6])
                                + icf[c * 55 + 53] * (p[7] - means[c * 10 + 7])
                                + icf[c * 55 + 54] * (p[8] - means[c * 10 + 8]))
                                .powi(2));
            }
        } else {
            panic!("d = {d} is not generated");
        }
        let mut largest = betas[0].value();
        for beta in &betas {
            largest = largest.max(beta.value());
        }
        let mut total = 0.0;
        for beta in &betas {
            total += (*beta - largest).exp();
        }
        total.ln() + largest
    });
    let mut largest = alphas[0].value();
    for alpha in alphas {
        largest = largest.max(alpha.value());
    }
    let mut total = 0.0;
    for alpha in alphas {
        total += (*alpha - largest).exp();
    }
    let lse_alphas = total.ln() + largest;
    let mut prior = 0.0;
    for c in 0..k {
        let mut squares = 0.0;
        for j in 0..d {
            squares += diagonals[c * d + j] * diagonals[c * d + j];
        }
        for l in c * tri + d..(c + 1) * tri {
            squares += icf[l] * icf[l];
        }
        prior += 0.5 * gamma * gamma * squares - m as f64 * sum_q[c];
    }
    sum_lse - n as f64 * lse_alphas + prior + constant
}

/// `gmm_objective`, the suite's loops, the sum over points by `ad::checkpoint::sum`.
#[reverse_diff]
#[allow(clippy::too_many_arguments)]
pub fn gmm_loops_summed(
    alphas: &[f64],
    means: &[f64],
    icf: &[f64],
    #[no_grad] points: &[f64],
    d: usize,
    #[no_grad] gamma: f64,
    m: usize,
    #[no_grad] constant: f64,
) -> f64 {
    let k = alphas.len();
    let n = points.len() / d;
    let tri = d * (d + 1) / 2;
    let mut diagonals: Vec<f64> = Vec::with_capacity(k * d);
    let mut sum_q: Vec<f64> = Vec::with_capacity(k);
    for c in 0..k {
        let mut total = 0.0;
        for j in 0..d {
            total += icf[c * tri + j];
            diagonals.push(icf[c * tri + j].exp());
        }
        sum_q.push(total);
    }

    let sum_lse = ad::checkpoint::sum(n, |i| {
        let mut betas: Vec<f64> = vec![0.0; k];
        let mut centred: Vec<f64> = vec![0.0; d];
        let mut z: Vec<f64> = vec![0.0; d];
        for c in 0..k {
            for j in 0..d {
                centred[j] = points[i * d + j] - means[c * d + j];
                z[j] = diagonals[c * d + j] * centred[j];
            }
            let mut l = c * tri + d;
            for col in 0..d {
                for row in col + 1..d {
                    z[row] += icf[l] * centred[col];
                    l += 1;
                }
            }
            let mut norm = 0.0;
            for j in 0..d {
                norm += z[j] * z[j];
            }
            betas[c] = alphas[c] + sum_q[c] - 0.5 * norm;
        }
        let mut largest = betas[0].value();
        for beta in &betas {
            largest = largest.max(beta.value());
        }
        let mut total = 0.0;
        for beta in &betas {
            total += (*beta - largest).exp();
        }
        total.ln() + largest
    });
    let mut largest = alphas[0].value();
    for alpha in alphas {
        largest = largest.max(alpha.value());
    }
    let mut total = 0.0;
    for alpha in alphas {
        total += (*alpha - largest).exp();
    }
    let lse_alphas = total.ln() + largest;
    let mut prior = 0.0;
    for c in 0..k {
        let mut squares = 0.0;
        for j in 0..d {
            squares += diagonals[c * d + j] * diagonals[c * d + j];
        }
        for l in c * tri + d..(c + 1) * tri {
            squares += icf[l] * icf[l];
        }
        prior += 0.5 * gamma * gamma * squares - m as f64 * sum_q[c];
    }
    sum_lse - n as f64 * lse_alphas + prior + constant
}

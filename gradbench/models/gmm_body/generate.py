"""Writes src/fused.rs: the suite's GMM (benches/suite/annotated.rs, `gmm_objective`) at d = 2
and d = 10 with each beta written as one expression of the component's parameters, the loops
over coordinates unrolled, so that `#[reverse_diff]` fuses it into one record. Run from this
folder: `python3 generate.py && cargo fmt`."""


def norm(d):
    """The expression of ||Q_c (x_i - mu_c)||^2 as the loops compute it: z_r = diag_r centred_r
    plus the lower triangle's icf[l] centred_col, in the loops' order of l."""
    tri = d * (d + 1) // 2

    def centred(j):
        return f"(p[{j}] - means[c * {d} + {j}])"

    terms = []
    for r in range(d):
        parts = [f"diagonals[c * {d} + {r}] * {centred(r)}"]
        l = d
        for col in range(d):
            for row in range(col + 1, d):
                if row == r:
                    parts.append(f"icf[c * {tri} + {l}] * {centred(col)}")
                l += 1
        terms.append("(" + " + ".join(parts) + ").powi(2)")
    return " + ".join(terms)


def function(sizes):
    betas = "\n        } else ".join(
        f"""if d == {d} {{
            let p = [{", ".join(f"points[i * {d} + {j}]" for j in range(d))}];
            for c in 0..k {{
                betas[c] = alphas[c] + sum_q[c] - 0.5 * ({norm(d)});
            }}"""
        for d in sizes
    )
    return f"""
/// `gmm_objective` at d = {" or ".join(str(d) for d in sizes)}, each beta one expression.
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
) -> f64 {{
    let k = alphas.len();
    let n = points.len() / d;
    let tri = d * (d + 1) / 2;
    let mut diagonals: Vec<f64> = Vec::with_capacity(k * d);
    let mut sum_q: Vec<f64> = Vec::with_capacity(k);
    for c in 0..k {{
        let mut total = 0.0;
        for j in 0..d {{
            total += icf[c * tri + j];
            diagonals.push(icf[c * tri + j].exp());
        }}
        sum_q.push(total);
    }}
    let mut betas: Vec<f64> = vec![0.0; k];
    let mut sum_lse = 0.0;
    for i in 0..n {{
        {betas}
        }} else {{
            panic!("d = {{d}} is not generated");
        }}
        let mut largest = betas[0].value();
        for beta in &betas {{
            largest = largest.max(beta.value());
        }}
        let mut total = 0.0;
        for beta in &betas {{
            total += (*beta - largest).exp();
        }}
        sum_lse += total.ln() + largest;
    }}
    let mut largest = alphas[0].value();
    for alpha in alphas {{
        largest = largest.max(alpha.value());
    }}
    let mut total = 0.0;
    for alpha in alphas {{
        total += (*alpha - largest).exp();
    }}
    let lse_alphas = total.ln() + largest;
    let mut prior = 0.0;
    for c in 0..k {{
        let mut squares = 0.0;
        for j in 0..d {{
            squares += diagonals[c * d + j] * diagonals[c * d + j];
        }}
        for l in c * tri + d..(c + 1) * tri {{
            squares += icf[l] * icf[l];
        }}
        prior += 0.5 * gamma * gamma * squares - m as f64 * sum_q[c];
    }}
    sum_lse - n as f64 * lse_alphas + prior + constant
}}
"""


HEADER = """//! Written by `generate.py`: the suite's GMM with each beta one expression (see `main.rs`).
#![allow(clippy::needless_range_loop)]

use ad::reverse_diff;
"""

with open("src/fused.rs", "w") as out:
    out.write(HEADER + function([2, 10]))

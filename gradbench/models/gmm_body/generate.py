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


LOOPS = """
    let mut centred: Vec<f64> = vec![0.0; d];
    let mut z: Vec<f64> = vec![0.0; d];"""

def suite_betas():
    """The suite's loop over components that computes each beta, as `annotated.rs` writes it."""
    with open("../../../benches/suite/annotated.rs") as suite:
        text = suite.read()
    body = text[text.index("pub fn gmm_objective(") :]
    first = body.index("        for c in 0..k {\n            for j in 0..d {")
    last = body.index("betas[c] = alphas[c] + sum_q[c] - 0.5 * norm;\n        }", first)
    return body[first + 8 : body.index("}", last) + 1]


LOOP_BETAS = suite_betas()


def function(sizes, name, fused, summed):
    """`gmm_objective` named `name`: each beta one expression (`fused`) or the suite's loops;
    the sum over points by `ad::checkpoint::sum` (`summed`) or the suite's loop."""
    if fused:
        betas = "\n        } else ".join(
            f"""if d == {d} {{
            let p = [{", ".join(f"points[i * {d} + {j}]" for j in range(d))}];
            for c in 0..k {{
                betas[c] = alphas[c] + sum_q[c] - 0.5 * ({norm(d)});
            }}"""
            for d in sizes
        )
        betas += """
        } else {
            panic!("d = {d} is not generated");
        }"""
        locals_ = ""
    else:
        betas = LOOP_BETAS
        locals_ = LOOPS
    lse = """let mut largest = betas[0].value();
        for beta in &betas {
            largest = largest.max(beta.value());
        }
        let mut total = 0.0;
        for beta in &betas {
            total += (*beta - largest).exp();
        }"""
    if summed:
        points = f"""let sum_lse = ad::checkpoint::sum(n, |i| {{
        let mut betas: Vec<f64> = vec![0.0; k];{locals_.replace(chr(10) + "    ", chr(10) + "        ")}
        {betas}
        {lse}
        total.ln() + largest
    }});"""
    else:
        points = f"""let mut sum_lse = 0.0;
    for i in 0..n {{
        {betas}
        {lse}
        sum_lse += total.ln() + largest;
    }}"""
    what = ("each beta one expression" if fused else "the suite's loops") + (
        ", the sum over points by `ad::checkpoint::sum`" if summed else ""
    )
    return f"""
/// `gmm_objective`{" at d = " + " or ".join(str(d) for d in sizes) if fused else ""}, {what}.
#[reverse_diff]
#[allow(clippy::too_many_arguments)]
pub fn {name}(
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
    {"" if summed else "let mut betas: Vec<f64> = vec![0.0; k];" + locals_}
    {points}
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
    out.write(HEADER + function([2, 10], "gmm_fused", True, False))
    out.write(function([2, 10], "gmm_fused_summed", True, True))
    out.write(function([2, 10], "gmm_loops_summed", False, True))

"""JAX on the functions of the Rust benchmark suite (benches/suite/suite.rs), for BENCHMARKS.md.

For each function and size, the median time of `jit(f)` and of `jit(value_and_grad(f))` after
warm-up, float64 enabled, every call waited for with `block_until_ready`. The inputs are those of
the Rust suite (benches/common/mod.rs: the same pseudo-random sequence, the same starting points),
and the size labels are criterion's, so `cargo run --release -p ad-reports --bin bench_report` can put JAX
beside the Rust tools. Run it through `benches/jax/run.sh`, which makes the virtual environment.

Before a case is timed, its value and gradient are checked: the value against the closed form
where there is one, the gradient against an analytic one where it is short (scalar
multiplication, dot, matvec, Rosenbrock, chain), and against central differences of the jitted
`f` at the first, middle and last input everywhere (the check of benches/common/mod.rs). A wrong
result stops the script with an error, so the file never holds a time for a wrong gradient.

The output is CSV: `#`-prefixed lines `# key: value` (versions, date, settings), then a header
and one row per case:
`function,size,jit_f_ns,jit_value_and_grad_ns,compile_f_ms,compile_value_and_grad_ms`.
"""

import argparse
import csv
import datetime
import math
import os
import platform
import statistics
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402  (after enabling float64)
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.scipy.special import logsumexp  # noqa: E402

# The sizes of the Rust suite (benches/common/mod.rs).
DOT_SIZES = [1_000, 100_000]
MATVEC_SIZES = [100, 1_000]
ROSENBROCK_SIZES = [10, 1_000, 100_000]
CHAIN_SIZES = [10, 1_000, 100_000, 1_000_000]
CHAIN_FACTOR = 1e-6
CHAIN_START = 0.75
MLP_INPUTS, MLP_HIDDEN, MLP_BATCH = 16, 32, 64
MLP_WEIGHTS = MLP_HIDDEN * MLP_INPUTS + MLP_HIDDEN + MLP_HIDDEN + 1
GMM_FILE = "data/adbench/gmm/1k/gmm_d2_K5.txt"


# --- the inputs of the Rust suite ---------------------------------------------------------------


def pseudo_random(count, seed):
    """`pseudo_random` of benches/common/mod.rs: the same 64-bit linear congruential sequence,
    mapped to [-1, 1) the same way, so both suites measure the same numbers."""
    mask = (1 << 64) - 1

    def step(state):
        return (state * 6364136223846793005 + 1442695040888963407) & mask

    state = step(seed)
    out = np.empty(count)
    for i in range(count):
        state = step(state)
        out[i] = (state >> 11) / float(1 << 52) - 1.0
    return out


def rosenbrock_inputs(n):
    return np.array([-1.2 if i % 2 == 0 else 1.0 for i in range(n)])


# --- the functions, as a JAX user would write them ----------------------------------------------


def scalar_mult(x, y):
    return x * y


def dot(x, y):
    return jnp.dot(x, y)


def matvec_sum(a, x):
    n = x.shape[0]
    return jnp.sum(a.reshape(n, n) @ x)


def rotated_sum(q, v):
    """The sum of the components of v rotated by q = (qx, qy, qz, qw):
    2 (u.v) u + (s^2 - u.u) v + 2 s (u x v), u = q[:3], s = q[3]."""
    u, s = q[:3], q[3]
    rotated = 2.0 * jnp.dot(u, v) * u + (s * s - jnp.dot(u, u)) * v + 2.0 * s * jnp.cross(u, v)
    return jnp.sum(rotated)


def rosenbrock(x):
    d = x[1:] - x[:-1] * x[:-1]
    e = 1.0 - x[:-1]
    return jnp.sum(100.0 * (d * d) + e * e)


def perceptron_loss(unit):
    """The mean squared error of the 16-32-1 perceptron whose hidden units apply `unit`."""

    def loss(weights, inputs, targets):
        w1 = weights[: MLP_HIDDEN * MLP_INPUTS].reshape(MLP_HIDDEN, MLP_INPUTS)
        rest = weights[MLP_HIDDEN * MLP_INPUTS :]
        b1, w2, b2 = rest[:MLP_HIDDEN], rest[MLP_HIDDEN : 2 * MLP_HIDDEN], rest[2 * MLP_HIDDEN]
        hidden = unit(inputs @ w1.T + b1)
        residual = hidden @ w2 + b2 - targets
        return jnp.mean(residual * residual)

    return loss


mlp_loss = perceptron_loss(jnp.tanh)
mlp_relu_loss = perceptron_loss(lambda pre: jnp.maximum(pre, 0.0))


def chain(n):
    """`x <- x + x c`, n times, as `lax.scan` over n steps: a Python loop would unroll n
    operations into the traced program, and compiling 10^6 of them takes far too long.
    (`lax.fori_loop` with constant bounds is the same scan when differentiated.)"""

    def f(x):
        def step(x, _):
            return x + x * CHAIN_FACTOR, None

        x, _ = lax.scan(step, x, None, length=n)
        return x

    return f


def gmm_constant(d, k, n, gamma, m):
    nu = d + m + 1
    ln_multigamma = 0.25 * d * (d - 1) * math.log(math.pi) + sum(
        math.lgamma(0.5 * nu + (1 - j) / 2) for j in range(1, d + 1)
    )
    c = nu * d * (math.log(gamma) - 0.5 * math.log(2.0)) - ln_multigamma
    return -(n * d / 2) * math.log(2 * math.pi) - k * c


def read_gmm(path):
    numbers = [float(token) for token in open(path).read().split()]
    d, k, n = (int(numbers[0]), int(numbers[1]), int(numbers[2]))
    tri = d * (d + 1) // 2
    at = 3
    alphas = np.array(numbers[at : at + k])
    at += k
    means = np.array(numbers[at : at + k * d]).reshape(k, d)
    at += k * d
    icf = np.array(numbers[at : at + k * tri]).reshape(k, tri)
    at += k * tri
    points = np.array(numbers[at : at + n * d]).reshape(n, d)
    at += n * d
    gamma, m = numbers[at], int(numbers[at + 1])
    return alphas, means, icf, points, gamma, m


def gmm_objective(d, gamma, m, constant):
    """ADBench's GMM objective (../shared/ADBENCH.md), vectorised over points and components;
    `logsumexp` treats its maximum as a constant, as the definition says."""
    rows, cols = zip(*[(r, c) for c in range(d) for r in range(c + 1, d)]) if d > 1 else ((), ())
    rows, cols = np.array(rows, dtype=int), np.array(cols, dtype=int)

    def f(alphas, means, icf, points):
        k = alphas.shape[0]
        n = points.shape[0]
        q, l = icf[:, :d], icf[:, d:]
        qmat = jnp.zeros((k, d, d)).at[:, rows, cols].set(l) + jax.vmap(jnp.diag)(jnp.exp(q))
        centred = points[:, None, :] - means[None, :, :]  # (n, K, d)
        z = jnp.einsum("kij,nkj->nki", qmat, centred)
        betas = alphas + jnp.sum(q, axis=1) - 0.5 * jnp.sum(z * z, axis=2)  # (n, K)
        prior = jnp.sum(
            0.5 * gamma * gamma * (jnp.sum(jnp.exp(q) ** 2, axis=1) + jnp.sum(l * l, axis=1))
            - m * jnp.sum(q, axis=1)
        )
        return jnp.sum(logsumexp(betas, axis=1)) - n * logsumexp(alphas) + prior + constant

    return f


# --- one case: check, then time -----------------------------------------------------------------


class Case:
    """A function at one size: its differentiable arguments (first `len(args)` positions),
    its constant arguments (after them), and what it must compute."""

    def __init__(
        self, function, size, f, args, constants=(), value=None, gradient=None, tolerance=1e-9
    ):
        self.function, self.size, self.f = function, size, f
        self.tolerance = tolerance  # relative, of the value
        self.args = tuple(jnp.asarray(a) for a in args)
        self.constants = tuple(jnp.asarray(c) for c in constants)
        self.value, self.gradient = value, gradient


def central_difference_check(case, jit_f, value, gradient):
    """The gradient at the first, middle and last input of the flattened arguments, against
    central differences of `jit_f` (tolerance of benches/common/mod.rs)."""
    flat = np.concatenate([np.ravel(np.asarray(a)) for a in case.args])
    grad = np.concatenate([np.ravel(np.asarray(g)) for g in gradient])
    shapes = [np.shape(a) for a in case.args]

    def evaluate(vector):
        parts, at = [], 0
        for shape in shapes:
            size = int(np.prod(shape)) if shape else 1
            parts.append(jnp.asarray(vector[at : at + size].reshape(shape)))
            at += size
        return float(jit_f(*parts, *case.constants))

    last = flat.size - 1
    for i in sorted({0, last // 2, last}):
        step = 1e-5 * max(abs(flat[i]), 1.0)
        above, below = flat.copy(), flat.copy()
        above[i] += step
        below[i] -= step
        central = (evaluate(above) - evaluate(below)) / (2 * step)
        tolerance = 1e-6 * max(abs(grad[i]), 1.0) + 1e-12 * abs(value) / step
        if abs(central - grad[i]) > tolerance:
            sys.exit(
                f"error: {case.function} {case.size}: d/dx{i} = {grad[i]} but the central "
                f"difference gives {central}"
            )


def check(case, jit_f, jit_vg):
    value, gradient = jit_vg(*case.args, *case.constants)
    value = float(value)
    primal = float(jit_f(*case.args, *case.constants))
    if abs(value - primal) > 1e-12 * max(abs(primal), 1.0):
        sys.exit(f"error: {case.function} {case.size}: value_and_grad gives {value}, f {primal}")
    if case.value is not None and abs(value - case.value) > case.tolerance * max(abs(case.value), 1.0):
        sys.exit(f"error: {case.function} {case.size}: value {value}, expected {case.value}")
    if case.gradient is not None:
        expected = np.concatenate([np.ravel(np.asarray(g)) for g in case.gradient])
        got = np.concatenate([np.ravel(np.asarray(g)) for g in gradient])
        scale = max(1.0, float(np.max(np.abs(expected))))
        worst = float(np.max(np.abs(got - expected)))
        if worst > 1e-9 * scale:
            sys.exit(
                f"error: {case.function} {case.size}: gradient differs from the analytic one "
                f"by {worst}"
            )
    central_difference_check(case, jit_f, value, gradient)


def median_ns(call, seconds, samples):
    """The median time of one call, in nanoseconds: `samples` samples of k calls each, k
    chosen so that a sample lasts about `seconds / samples` (as criterion does)."""
    target = seconds / samples
    k = 1
    while True:
        started = time.perf_counter()
        for _ in range(k):
            call()
        elapsed = time.perf_counter() - started
        if elapsed >= target or k >= 1 << 20:
            break
        k = max(k + 1, min(10 * k, math.ceil(k * target / max(elapsed, 1e-9))))
    times = []
    for _ in range(samples):
        started = time.perf_counter_ns()
        for _ in range(k):
            call()
        times.append((time.perf_counter_ns() - started) / k)
    return statistics.median(times)


def measure(case, seconds, samples):
    argnums = tuple(range(len(case.args)))
    jit_f = jax.jit(case.f)
    jit_vg = jax.jit(jax.value_and_grad(case.f, argnums=argnums))
    all_args = case.args + case.constants

    started = time.perf_counter()
    jit_f(*all_args).block_until_ready()
    compile_f = time.perf_counter() - started
    started = time.perf_counter()
    jax.block_until_ready(jit_vg(*all_args))
    compile_vg = time.perf_counter() - started

    check(case, jit_f, jit_vg)

    def call_f():
        jit_f(*all_args).block_until_ready()

    def call_vg():
        jax.block_until_ready(jit_vg(*all_args))

    for _ in range(10):  # warm-up beyond the compiling call
        call_f()
        call_vg()
    f_ns = median_ns(call_f, seconds, samples)
    vg_ns = median_ns(call_vg, seconds, samples)
    return f_ns, vg_ns, compile_f * 1e3, compile_vg * 1e3


# --- the cases ----------------------------------------------------------------------------------


def cases(repo):
    x, y = 1.5, -2.25
    yield Case("scalar_mult", "2 inputs", scalar_mult, [x, y], value=x * y, gradient=[y, x])

    for n in DOT_SIZES:
        a, b = pseudo_random(n, 1), pseudo_random(n, 2)
        yield Case("dot", f"n={n}", dot, [a, b], gradient=[b, a])

    for n in MATVEC_SIZES:
        a, v = pseudo_random(n * n, 3), pseudo_random(n, 4)
        # d/da_ij = v_j, d/dv_j = sum_i a_ij
        expected = [np.tile(v, n), a.reshape(n, n).sum(axis=0)]
        yield Case("matvec_sum", f"n={n}", matvec_sum, [a, v], gradient=expected)

    q, v = np.array([1.1, 2.2, 3.3, 4.4]), np.array([5.5, 6.6, 7.7])
    yield Case("rotate_vec_by_quat", "7 inputs", rotated_sum, [q, v])

    for n in ROSENBROCK_SIZES:
        x = rosenbrock_inputs(n)
        d = x[1:] - x[:-1] ** 2
        expected = np.zeros(n)
        expected[:-1] += -400.0 * x[:-1] * d - 2.0 * (1.0 - x[:-1])
        expected[1:] += 200.0 * d
        yield Case("rosenbrock", f"n={n}", rosenbrock, [x], gradient=[expected])

    weights = 0.3 * pseudo_random(MLP_WEIGHTS, 7)
    inputs = pseudo_random(MLP_BATCH * MLP_INPUTS, 5).reshape(MLP_BATCH, MLP_INPUTS)
    targets = pseudo_random(MLP_BATCH, 6)
    yield Case("mlp", "16-32-1 batch 64", mlp_loss, [weights], constants=[inputs, targets])
    yield Case(
        "mlp_relu", "16-32-1 batch 64", mlp_relu_loss, [weights], constants=[inputs, targets]
    )

    for n in CHAIN_SIZES:
        growth = (1.0 + CHAIN_FACTOR) ** n
        yield Case(
            "chain",
            f"n={n}",
            chain(n),
            [CHAIN_START],
            value=CHAIN_START * growth,
            gradient=[growth],
        )

    alphas, means, icf, points, gamma, m = read_gmm(os.path.join(repo, GMM_FILE))
    (k, d), n = means.shape, points.shape[0]
    constant = gmm_constant(d, k, n, gamma, m)
    yield Case(
        "gmm",
        f"d={d} K={k} n={n}",
        gmm_objective(d, gamma, m, constant),
        [alphas, means, icf],
        constants=[points],
        value=-5240.59,  # ADBench's value (ADBENCH.md), given to two decimals
        tolerance=1e-6,
    )


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the CSV file to write")
    parser.add_argument("--repo", required=True, help="the repository root (for the GMM data)")
    parser.add_argument(
        "--seconds", type=float, default=1.0, help="measuring time per timed function"
    )
    parser.add_argument("--samples", type=int, default=30, help="samples per timed function")
    parser.add_argument("--filter", default="", help="only functions whose name contains this")
    options = parser.parse_args()

    rows = []
    for case in cases(options.repo):
        if options.filter not in case.function:
            continue
        f_ns, vg_ns, compile_f, compile_vg = measure(case, options.seconds, options.samples)
        rows.append((case.function, case.size, f_ns, vg_ns, compile_f, compile_vg))
        print(
            f"{case.function:>20} {case.size:>18}  jit(f) {f_ns / 1e3:12.3f} us   "
            f"jit(value_and_grad) {vg_ns / 1e3:12.3f} us   ratio {vg_ns / f_ns:6.2f}",
            flush=True,
        )

    os.makedirs(os.path.dirname(os.path.abspath(options.out)), exist_ok=True)
    with open(options.out, "w", newline="") as out:
        meta = {
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "jax": jax.__version__,
            "jaxlib": getattr(jax.lib, "__version__", None) or _jaxlib_version(),
            "python": platform.python_version(),
            "cpu": cpu_model(),
            "devices": ", ".join(str(device) for device in jax.devices()),
            "float64": str(jax.config.jax_enable_x64).lower(),
            "XLA_FLAGS": os.environ.get("XLA_FLAGS", ""),
            "chain": "lax.scan",
            "timing": f"median of {options.samples} samples over {options.seconds} s, "
            "each call followed by block_until_ready",
        }
        for key, value in meta.items():
            out.write(f"# {key}: {value}\n")
        writer = csv.writer(out)
        writer.writerow(
            [
                "function",
                "size",
                "jit_f_ns",
                "jit_value_and_grad_ns",
                "compile_f_ms",
                "compile_value_and_grad_ms",
            ]
        )
        for function, size, f_ns, vg_ns, compile_f, compile_vg in rows:
            writer.writerow(
                [function, size, f"{f_ns:.1f}", f"{vg_ns:.1f}", f"{compile_f:.1f}", f"{compile_vg:.1f}"]
            )
    print(f"wrote {options.out} ({len(rows)} cases)")


def _jaxlib_version():
    try:
        import jaxlib

        return jaxlib.__version__
    except (ImportError, AttributeError):
        return "unknown"


if __name__ == "__main__":
    main()

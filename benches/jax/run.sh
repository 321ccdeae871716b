#!/usr/bin/env bash
# JAX on the functions of the Rust benchmark suite, for the JAX columns of BENCHMARKS.md.
#
#   bash benches/jax/run.sh            # writes $CARGO_TARGET_DIR/jax/results.csv (or target/...)
#   bash benches/jax/run.sh OUT.csv    # writes OUT.csv
#   bash benches/jax/run.sh OUT.csv --seconds 0.2 --samples 10 --filter chain   # a quick look
#
# Makes a virtual environment in $CARGO_TARGET_DIR/jax/venv (or $JAX_VENV), installs `jax` (the
# CPU build, from PyPI; `JAX_VERSION=0.4.38` pins a version) into it once, then runs
# benches/jax/bench.py: float64 on, the median time of `jit(f)` and of `jit(value_and_grad(f))`
# after warm-up, each gradient checked first. Takes about a minute after the install.
# XLA's intra-op thread pool is switched off (single thread, as the Rust suite), unless XLA_FLAGS
# is already set. `cargo run --release -p ad-reports --bin bench_report` reads the file if it is there.
# Nothing in the Rust build or tests needs Python.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
venv="${JAX_VENV:-$target/jax/venv}"
out="${1:-$target/jax/results.csv}"
shift || true
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import jax" 2>/dev/null; then
    echo "==> creating $venv and installing jax${JAX_VERSION:+==$JAX_VERSION} from PyPI"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet "jax${JAX_VERSION:+==$JAX_VERSION}"
fi

export XLA_FLAGS="${XLA_FLAGS:---xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1}"
# Python and JAX's own logging stay quiet; the script prints one line per case.
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-1}"

"$venv/bin/python" "$repo/benches/jax/bench.py" --repo "$repo" --out "$out" "$@"

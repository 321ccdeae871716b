#!/usr/bin/env bash
# gradbench's evals at their default sizes against ad-gradbench, each evaluation timed at least
# 3 times and for at least 0.2 s (as in shared/gradbench/PEERS.md), then per eval the geometric
# mean of the derivative/primal ratios (median derivative time / median primal time per input).
#
#   gradbench/run-all.sh                 every eval (about 10-20 minutes on 2 cores)
#   gradbench/run-all.sh lse det ht      only these (ht-simple is ht's simple variant)
#
# The kit is ../shared/gradbench beside the repository (or $GRADBENCH); run its `setup` once.
# The tool is target/release/ad-gradbench, built here (or $TOOL, used as it is). Logs and each
# eval's summary go to target/gradbench/; every output is validated, and the script exits
# non-zero if any eval had an output that was not valid.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GRADBENCH="${GRADBENCH:-$REPO/../shared/gradbench}"
OUT="$REPO/target/gradbench"
RUNS="--min-runs 3 --min-seconds 0.2"
mkdir -p "$OUT"

if [ -z "${TOOL:-}" ]; then
    TOOL="$REPO/target/release/ad-gradbench"
    (cd "$REPO" && cargo build --release -q -p ad-gradbench) || exit 1
fi

# name, eval, extra arguments (the defaults' ht has no complicated instance 12 in the kit).
runs=(
    "llsq llsq"
    "lse lse"
    "det det"
    "ode ode"
    "kmeans kmeans"
    "gmm gmm"
    "lstm lstm"
    "ba ba"
    "ht ht --max 11"
    "ht-simple ht --variant simple"
)

failed=0
summary=()
for entry in "${runs[@]}"; do
    read -r name eval extra <<<"$entry"
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
        continue
    fi
    echo "== $name"
    "$GRADBENCH/run" "$eval" -q --eval-args "$RUNS ${extra:-}" --log "$OUT/$name.jsonl" \
        -- "$TOOL" >"$OUT/$name.txt" 2>&1
    status=$?
    cat "$OUT/$name.txt"
    [ $status -eq 0 ] || failed=1
    # The ratio table that `run` prints: `module description functions ratio` rows.
    summary+=("$(awk -v name="$name" -v status="$status" '
        /^== derivative\/primal ratio/ { table = 1; next }
        table && NF == 0 { table = 0 }
        table && $NF ~ /^[0-9.]+$/ { logs += log($NF); count++ }
        END {
            mean = count ? sprintf("%.2f", exp(logs / count)) : "-"
            printf "%-10s %5d %10s %s", name, count, mean, status == 0 ? "valid" : "NOT ALL VALID"
        }' "$OUT/$name.txt")")
done

echo
echo "== geometric mean of derivative/primal ratios (ad-gradbench)"
printf '%-10s %5s %10s %s\n' eval sizes ratio outputs
printf '%s\n' "${summary[@]}"
exit $failed

#!/usr/bin/env bash
# gradbench's evals at their default sizes against ad-gradbench, each evaluation timed at least
# 3 times and for at least 0.2 s (as in shared/gradbench/PEERS.md), then per eval the geometric
# mean of the derivative/primal ratios (median derivative time / median primal time per input).
#
#   gradbench/run-all.sh                 every eval (42 minutes on a busy 2-core machine)
#   gradbench/run-all.sh lse det ht      only these (ht-simple is ht's simple variant)
#   gradbench/run-all.sh --report        no runs: the summary of the last ones, again
#
# particle and saddle are left out: their four functions are all derivatives (no primal to
# divide by); CI runs them.
#
# The kit is ../shared/gradbench beside the repository (or $GRADBENCH); run its `setup` once.
# The tool is target/release/ad-gradbench, built here (or $TOOL, used as it is). Logs and each
# eval's summary go to target/gradbench/; every output is validated, and the script exits
# non-zero if any eval had an output that was not valid. It also writes target/gradbench.md,
# the "gradbench" section of BENCHMARKS.md (`cargo run --release -p ad-reports --bin bench_report`
# includes it): `ad`'s ratios beside those of the C++ tools measured on this machine
# (the kit's PEERS.md) and the ones gradbench publishes.
set -uo pipefail

report_only=0
if [ "${1:-}" = "--report" ]; then
    report_only=1
    shift
fi

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GRADBENCH="${GRADBENCH:-$REPO/../shared/gradbench}"
OUT="$REPO/target/gradbench"
RUNS="--min-runs 3 --min-seconds 0.2"
mkdir -p "$OUT"

if [ $report_only = 0 ] && [ -z "${TOOL:-}" ]; then
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
finished=()
loads=()
for entry in "${runs[@]}"; do
    read -r name eval extra <<<"$entry"
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
        continue
    fi
    if [ $report_only = 0 ]; then
        echo "== $name"
        "$GRADBENCH/run" "$eval" -q --eval-args "$RUNS ${extra:-}" --log "$OUT/$name.jsonl" \
            -- "$TOOL" >"$OUT/$name.txt" 2>&1
        cut -d' ' -f2 /proc/loadavg >"$OUT/$name.load" # the 5-minute load average
        cat "$OUT/$name.txt"
    fi
    [ -f "$OUT/$name.txt" ] || continue
    finished+=("$(date -u -r "$OUT/$name.txt" '+%Y-%m-%d %H:%M')")
    [ -f "$OUT/$name.load" ] && loads+=("$(cat "$OUT/$name.load")")
    # `run`'s last lines: "... gradbench exit code N", then OK or FAILED.
    status=$(sed -n 's/.*gradbench exit code \([0-9]*\).*/\1/p' "$OUT/$name.txt" | tail -1)
    [ "${status:-1}" = 0 ] || failed=1
    # The ratio table that `run` prints: `module description functions ratio` rows.
    summary+=("$(awk -v name="$name" -v status="${status:-1}" '
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

# The section of BENCHMARKS.md: these ratios beside the PEERS.md summary and the published ones.
when="$(printf '%s\n' "${finished[@]}" | sort | sed -n '1p;$p' | paste -sd/ - | sed 's|/| to |') UTC"
load=""
[ ${#loads[@]} -gt 0 ] && load="$(printf '%s\n' "${loads[@]}" | sort -n | sed -n '1p;$p' | paste -sd- -)"
printf '%s\n' "${summary[@]}" >"$OUT/summary.txt"
python3 - "$OUT/summary.txt" "$GRADBENCH/PEERS.md" "$when" "$load" \
    >"$REPO/target/gradbench.md" <<'PYTHON'
import sys

summary_file, peers_file, when, load = sys.argv[1:5]
# gradbench's published derivative/primal ratios (its machine), best tools per eval.
published = {
    "llsq": "Enzyme 1.44", "lse": "Enzyme 2.13", "det": "ad-hpp 2.93", "ode": "Enzyme 2.51",
    "kmeans": "Enzyme 3.01", "gmm": "manual 2.41, Tapenade 3.33", "lstm": "CoDiPack 2.13",
    "ba": "manual 7.7, Enzyme 9.7", "ht": "manual 7.7, CoDiPack 44.5",
}
# PEERS.md's summary rows: | eval | sizes | manual | adol-c | codipack | adept |
peers = {}
for line in open(peers_file):
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    if len(cells) == 6 and cells[0] in published and cells[1].isdigit():
        peers[cells[0]] = cells[2:]
print("## gradbench\n")
loaded = f", 5-minute load average {load} at the ends of the evals" if load else ""
print("From `gradbench/run-all.sh` (evals finished " + when + "; this machine's 2 cores shared "
      "with other jobs" + loaded + ", so the times are noisy): gradbench's evals at "
      "their default sizes against `target/release/ad-gradbench`, each evaluation timed at least "
      "3 times and for at least 0.2 s (`--eval-args \"--min-runs 3 --min-seconds 0.2\"`), every "
      "output validated against gradbench's C++ reference. Per eval, the geometric mean over its "
      "sizes of median(derivative) / median(primal), each tool against its own primal. `manual`, "
      "`adol-c`, `codipack` and `adept` were measured on this machine the same way "
      "(`shared/gradbench/PEERS.md`, which says what each times: ADOL-C tapes outside the timed "
      "part for most evals); the published ratios are gradbench's, on its own machine. ht is the "
      "complicated variant up to instance 11 (the kit has no 12th) and ht-simple the simple one; "
      "the peers were not run on ht. The last column names the tools measured here whose ratio "
      "is lower than `ad`'s.\n")
print("How `ad` computes each derivative (`gradbench/src/evals/`): one `_grad` (llsq, lse, det, "
      "lstm) or `_vjp` (ode: the last output's cotangent; gmm: `(1, -1)` on its two terms, "
      "its sum over points by `ad::checkpoint::sum` over blocks of points), on the tape but for "
      "det, ode and gmm, whose adjoints the macro writes out (det's through its recursion, "
      "split in a forward and a reverse function; README, \"Loops over arrays: adjoints "
      "written out\"); kmeans one `_hvp` along ones (gradient and diagonal Hessian), its nearest "
      "centroids chosen on values so that the tape holds one distance per point, where the C++ "
      "tools record all k; ba one forward pass per observation on `ad::Dual<f64, ad::Lanes<15>>` "
      "with a lane per input of its block; ht one forward pass "
      "on `ad::Dual<f64, ad::Lanes<K>>` with a lane per Jacobian column (26, or 28 with the two "
      "`u` columns; on 2026-11-24, 26-28 `_jvp` passes instead gave 409 and 366).\n")
tools = ["manual", "adol-c", "codipack", "adept"]
print("| eval | sizes | ad | " + " | ".join(tools) + " | published (gradbench) | lower here |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
for line in open(summary_file):
    name, sizes, ratio, *outputs = line.split()
    base = name.split("-")[0]
    note = "" if outputs == ["valid"] else " (not all outputs valid)"
    cells = peers.get(base, ["-"] * 4)
    ahead = [tool for tool, cell in zip(tools, cells)
             if ratio != "-" and cell.replace(".", "", 1).isdigit() and float(cell) < float(ratio)]
    lower = (", ".join(ahead) or "none") if base in peers else "-"
    print(f"| {name} | {sizes} | {ratio}{note} | " + " | ".join(cells)
          + f" | {published.get(base, '-')} | {lower} |")
PYTHON
echo "wrote $REPO/target/gradbench.md"
exit $failed

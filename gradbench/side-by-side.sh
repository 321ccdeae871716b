#!/usr/bin/env bash
# ad-gradbench beside gradbench's C++ reference (`manual`) and CoDiPack, in one run: for each
# eval at its default sizes, the three tools one after another (so they share the machine's
# conditions), each evaluation timed at least 3 times and for at least 0.2 s; then per eval and
# tool the geometric mean of the derivative/primal ratios, and of `ad`'s derivative time over each
# C++ tool's. Needs the kit's peers:
# `../shared/gradbench/setup --peers` (run here). About 15-25 minutes on 2 cores.
#
#   gradbench/side-by-side.sh             every eval but ht (the peers have no ht here)
#   gradbench/side-by-side.sh lse det     only these
#   gradbench/side-by-side.sh --native    also `ad-native`: `ad-gradbench` built with `-C
#                                         target-cpu=native` (in target/native), as the kit
#                                         builds the C++ tools (`-O3 -march=native` at each
#                                         eval's `define`)
#   gradbench/side-by-side.sh --report    the table again from the last logs (target/side-by-side)
set -uo pipefail

report_only=0
native=0
while [ $# -gt 0 ]; do
    case "$1" in
        --report) report_only=1 ;;
        --native) native=1 ;;
        *) break ;;
    esac
    shift
done

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GRADBENCH="${GRADBENCH:-$REPO/../shared/gradbench}"
OUT="$REPO/target/side-by-side"
tools=(ad manual codipack)
[ $native = 1 ] && tools=(ad ad-native manual codipack)
mkdir -p "$OUT"
if [ $report_only = 0 ]; then
    (cd "$REPO" && cargo build --release -q -p ad-gradbench) || exit 1
    if [ $native = 1 ]; then
        (cd "$REPO" && RUSTFLAGS="-C target-cpu=native" CARGO_TARGET_DIR="$REPO/target/native" \
            cargo build --release -q -p ad-gradbench) || exit 1
    fi
    "$GRADBENCH/setup" --peers >"$OUT/setup.log" 2>&1 || { echo "setup --peers failed"; exit 1; }
fi

evals=("$@")
[ ${#evals[@]} -gt 0 ] || evals=(llsq lse det ode kmeans gmm lstm ba)
failed=0
for eval in "${evals[@]}"; do
    [ $report_only = 1 ] && break
    for tool in "${tools[@]}"; do
        case "$tool" in
            ad) command=("$REPO/target/release/ad-gradbench") ;;
            ad-native) command=("$REPO/target/native/release/ad-gradbench") ;;
            *) command=(python3 python/gradbench/gradbench/cpp.py "$tool") ;;
        esac
        "$GRADBENCH/run" "$eval" -q --eval-args "--min-runs 3 --min-seconds 0.2" \
            --log "$OUT/$eval-$tool.jsonl" -- "${command[@]}" >"$OUT/$eval-$tool.txt" 2>&1 \
            || failed=1
    done
done

# `ad`'s derivative time over another tool's: the geometric mean over an eval's inputs of the
# ratio of median times, from the logs (the evaluations are in the same order for every tool).
times() {
    python3 - "$OUT/$1-ad.jsonl" "$OUT/$1-$2.jsonl" <<'PY'
import json, math, statistics, sys

def medians(path):
    functions, times = {}, {}
    for line in open(path):
        entry = json.loads(line)
        message, response = entry.get("message"), entry.get("response")
        if message and message.get("kind") == "evaluate":
            functions[message["id"]] = message["function"]
        if response and "timings" in response and response["id"] in functions:
            evaluations = [t["nanoseconds"] for t in response["timings"] if t["name"] == "evaluate"]
            times[response["id"]] = (functions[response["id"]], statistics.median(evaluations))
    return times

try:
    ad, other = medians(sys.argv[1]), medians(sys.argv[2])
    logs = [math.log(time / other[id][1]) for id, (function, time) in ad.items()
            if id in other and function not in ("primal", "objective", "cost")]
    print(f"{math.exp(sum(logs) / len(logs)):.2f}" if logs else "-")
except (OSError, ValueError, KeyError):
    print("-")
PY
}

others=()
for tool in "${tools[@]}"; do
    case "$tool" in ad | ad-native) ;; *) others+=("$tool") ;; esac
done
echo "| eval | sizes |$(printf ' %s |' "${tools[@]}")$(printf ' `ad` / %s time |' "${others[@]}")"
echo "| --- | ---: |$(printf ' ---: |%.0s' "${tools[@]}" "${others[@]}")"
for eval in "${evals[@]}"; do
    row="| $eval |"
    sizes=""
    for tool in "${tools[@]}"; do
        # The ratio table `run` prints: `module description functions ratio` rows.
        read -r count mean < <(awk '
            /^== derivative\/primal ratio/ { table = 1; next }
            table && NF == 0 { table = 0 }
            table && $NF ~ /^[0-9.]+$/ { logs += log($NF); count++ }
            END { printf "%d %s\n", count, count ? sprintf("%.2f", exp(logs / count)) : "-" }
        ' "$OUT/$eval-$tool.txt")
        sizes="$count"
        grep -q "gradbench exit code 0" "$OUT/$eval-$tool.txt" || { mean="$mean (not all valid)"; failed=1; }
        row="$row $mean |"
    done
    for tool in "${others[@]}"; do
        row="$row $(times "$eval" "$tool") |"
    done
    echo "${row/| $eval |/| $eval | $sizes |}"
done
exit $failed

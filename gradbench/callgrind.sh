#!/usr/bin/env bash
# Instructions per evaluation of `ad-gradbench`, independent of the machine's load: replays one
# `evaluate` message of a side-by-side log (`gradbench/side-by-side.sh` first) under valgrind's
# callgrind, with 3 runs and with 1, and prints half the difference.
#
#   gradbench/callgrind.sh ode gradient 1     the second `gradient` evaluation of ode's log
#   BIN=/tmp/old-ad-gradbench gradbench/callgrind.sh ode gradient 1   another build
set -euo pipefail
[ $# = 3 ] || { echo "usage: $0 EVAL FUNCTION INDEX" >&2; exit 2; }
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${BIN:-$REPO/target/release/ad-gradbench}"
LOG="$REPO/target/side-by-side/$1-ad.jsonl"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
count() {
    python3 - "$LOG" "$2" "$3" "$1" >"$work/in" <<'PY'
import json, sys
log, function, index, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
messages = [json.loads(line)["message"] for line in open(log) if '"message"' in line]
chosen = [m for m in messages if m.get("kind") == "evaluate" and m["function"] == function][index]
chosen["input"].update(min_runs=runs, min_seconds=0.0)
for m in [m for m in messages if m.get("kind") in ("start", "define")] + [chosen]:
    print(json.dumps(m))
PY
    valgrind --tool=callgrind --callgrind-out-file="$work/out" "$BIN" <"$work/in" 2>&1 >/dev/null \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
one=$(count 1 "$2" "$3")
three=$(count 3 "$2" "$3")
echo "$1 $2 $3: $(((three - one) / 2)) instructions per evaluation"

#!/usr/bin/env bash
# bench/machine_watch.sh — issue 25's targets: does watching the machine keep A/A honest?
#
# Four pairs of sweeps of one matrix (copy, gather x 4K, 64K x 1 thread, stream, by default),
# each compared with `bytepath compare`; prints the points flagged (faster or slower) per pair:
#   quiet      A/A on a quiet machine, settle and redo on            (the reference)
#   hog-off    B runs a busy loop pinned to CPU 0 for the first half of its wall time,
#              --settle off and --quiet-threshold 100% (no redo)     (target: more than quiet)
#   hog-on     the same busy loop, --settle on and disturbed visits made again
#                                                                     (target: at most quiet)
#   shift      B runs a memory-bandwidth hog on the other CPU throughout; compared plain and
#              with --normalize canary (target: the machine change is named; normalized at most
#              as many points flagged as quiet)
# and the canary's share of each sweep's wall time (from the sweep's machine line; target
# <= 3 % of a default sweep). It informs; exits 0 whatever the figures, 1 if a run failed.
# A loaded machine makes every figure here meaningless: run it alone.
#
# Environment: MECHANISMS=copy,gather SIZES=4K,64K VISITS=3 VISIT=300ms BUDGET=1s OUT=<dir>
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bytepath-bench-watch.XXXXXX")}"
mkdir -p "$OUT"
command -v taskset >/dev/null || { echo "machine_watch.sh: needs taskset (util-linux)" >&2; exit 2; }
cargo build --release --quiet
BIN=./target/release/bytepath

sweep() { # name extra-args...
  local name=$1; shift
  rm -rf "${OUT:?}/$name"
  "$BIN" sweep --mechanisms "${MECHANISMS:-copy,gather}" --sizes "${SIZES:-4K,64K}" \
    --threads 1 --patterns stream --visits "${VISITS:-3}" --visit "${VISIT:-300ms}" \
    --budget "${BUDGET:-1s}" --out "$OUT/$name" "$@" >"$OUT/$name.log" 2>&1 \
    || { tail -5 "$OUT/$name.log" >&2; echo "machine_watch.sh: sweep $name failed" >&2; exit 1; }
}

busy_for() { # seconds cpu
  timeout "$1" taskset -c "$2" sh -c 'while :; do :; done' || true
}

flagged() { # old new extra-args...
  local old=$1 new=$2; shift 2
  "$BIN" compare "$OUT/$old" "$OUT/$new" "$@" >"$OUT/$old-$new$*.txt" || true
  sed -n 's/.* compared: \([0-9]*\) faster, \([0-9]*\) slower.*/\1 \2/p' "$OUT/$old-$new$*.txt" \
    | awk '{print $1 + $2}'
}

sweep a
sweep b
echo "quiet A/A:              $(flagged a b) points flagged"
half=$(awk -v w="$(grep -o 'of the study.s [0-9.]* s' "$OUT/b.log" | grep -o '[0-9.]*')" 'BEGIN{print w/2}')
busy_for "$half" 0 & sweep c --settle off --quiet-threshold 100%; wait
echo "hog, settle/redo off:   $(flagged a c) points flagged"
busy_for "$half" 0 & sweep d; wait
echo "hog, settle/redo on:    $(flagged a d) points flagged"
# A memory-bandwidth hog on the other CPU for the whole of the sweep.
python3 -c 'import time; b=bytearray(256<<20); e=time.time()+3600
while time.time()<e: b[:]=b' & hog=$!
taskset -p -c 1 "$hog" >/dev/null
sweep e --settle off
kill "$hog"
echo "machine shift, plain:   $(flagged a e) points flagged; $(head -1 "$OUT/a-e.txt")"
echo "machine shift, normalized: $(flagged a e --normalize canary) points flagged"
for s in a b c d e; do echo "sweep $s: $(grep '^machine:' "$OUT/$s.log")"; done
echo "folders and logs: $OUT"

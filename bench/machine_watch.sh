#!/usr/bin/env bash
# bench/machine_watch.sh — issue 25's targets: does watching the machine keep A/A honest?
#
# Pairs of sweeps of one matrix (copy, gather x 4K, 64K x 1 thread, stream, by default), each
# compared with `bytepath compare` against the first sweep a; counts the points flagged (faster
# or slower, after compare's Holm correction):
#   quiet      b: A/A on a quiet machine, settle and redo on               (the reference)
#   hog-off    c: a busy loop pinned to one of the run's CPUs (HOG_CPU, default the first
#              allowed) for half of b's wall time, started when c's first round begins (its
#              first canary), with --settle off and --quiet-threshold 100% (nothing is marked
#              disturbed, nothing made again)                           (target: more than quiet)
#   hog-on     d: the same busy loop, started when d's first round begins, that is after its
#              settle ended; settle on and disturbed visits made again  (target: at most quiet)
#   shift      e: a memory-bandwidth hog on the other CPU (SHIFT_CPU, default the second
#              allowed) for the whole sweep, --settle off; compared plain and with
#              --normalize canary (target: the machine change is named; normalized, at most
#              as many points flagged as quiet)
# Each hogged sweep's line says how many of its visits ran beside the hog (others above 10 %
# of the run's CPUs in the visit's interference block), so a hog that missed the measured
# visits shows. Then the canary's share of each sweep's wall time, and of a default sweep's
# (`bytepath sweep` with its defaults, a few minutes; DEFAULT_SWEEP=0 skips it, DEFAULT_ARGS
# adds flags to it). Target: <= 3 % of a default sweep. The summary block at the end holds
# every figure the targets ask for. It informs; exits 0 whatever the figures, 1 if a run
# failed. A loaded machine makes every figure here meaningless: run it alone.
#
# Environment: MECHANISMS=copy,gather SIZES=4K,64K VISITS=6 VISIT=300ms BUDGET=1s OUT=<dir>
#              HOG_CPU SHIFT_CPU DEFAULT_SWEEP=1 DEFAULT_ARGS=
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bytepath-bench-watch.XXXXXX")}"
mkdir -p "$OUT"
for tool in taskset python3; do
  command -v "$tool" >/dev/null || { echo "machine_watch.sh: needs $tool" >&2; exit 2; }
done
cargo build --release --quiet
BIN=./target/release/bytepath
read -r -a ALLOWED <<<"$(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)))')"
HOG_CPU="${HOG_CPU:-${ALLOWED[0]}}"
SHIFT_CPU="${SHIFT_CPU:-${ALLOWED[1]:-${ALLOWED[0]}}}"

sweep() { # name extra-args...
  local name=$1; shift
  rm -rf "${OUT:?}/$name"
  "$BIN" sweep --mechanisms "${MECHANISMS:-copy,gather}" --sizes "${SIZES:-4K,64K}" \
    --threads 1 --patterns stream --visits "${VISITS:-6}" --visit "${VISIT:-300ms}" \
    --budget "${BUDGET:-1s}" --out "$OUT/$name" "$@" >"$OUT/$name.log" 2>&1 \
    || { tail -5 "$OUT/$name.log" >&2; echo "machine_watch.sh: sweep $name failed" >&2; exit 1; }
}

# A sweep in the background; once its first round has begun (its first canary is written, so
# any settle is over) a busy loop pinned to $HOG_CPU runs for $2 seconds beside it.
hogged_sweep() { # name seconds extra-args...
  local name=$1 seconds=$2; shift 2
  rm -rf "${OUT:?}/$name"
  sweep "$name" "$@" &
  local pid=$!
  until [ -s "$OUT/$name/canary.jsonl" ] || ! kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  timeout "$seconds" taskset -c "$HOG_CPU" sh -c 'while :; do :; done' || true
  wait "$pid"
}

flagged() { # old new extra-args...
  local old=$1 new=$2; shift 2
  local args="$*"
  local file="$OUT/$old-$new${args// /}.txt"
  "$BIN" compare "$OUT/$old" "$OUT/$new" "$@" >"$file" || true
  sed -n 's/^\([0-9]*\) points compared: \([0-9]*\) faster, \([0-9]*\) slower.*/\2+\3 of \1/p' "$file" \
    | awk -F'[+ ]' '{print $1 + $2 " of " $4 " points"}'
}

# Visits of a sweep, and how many ran beside something else (others above 10 % of the run's
# CPUs), were marked disturbed, and were made again.
beside() { # name
  python3 - "$OUT/$1/visits.jsonl" <<'EOF'
import json, sys
blocks = []
for line in open(sys.argv[1]):
    v = json.loads(line).get("visit") or {}
    if isinstance(v.get("interference"), dict):
        blocks.append((v.get("key"), v.get("round"), v.get("kind"), v["interference"]))
busy = sum(1 for *_, b in blocks if b["others_cpu_share"] + b["steal_share"] > 0.10)
marked = [i for i, (*_, b) in enumerate(blocks) if b["disturbed"]]
again = sum(1 for i in marked if any(blocks[j][:3] == blocks[i][:3] for j in range(i + 1, len(blocks))))
print(f"{len(blocks)} visits, {busy} beside others (>10 % of the run's CPUs), "
      f"{len(marked)} marked disturbed, {again} made again")
EOF
}

canary_share() { # name: the sweep's machine line, from "N canaries took" on
  grep '^machine:' "$OUT/$1.log" | sed -n 's/.*; \([0-9]* canaries took .*\)/\1/p'
}

sweep a
sweep b
wall=$(grep -o 'of the study.s [0-9.]* s' "$OUT/b.log" | grep -o '[0-9.]*' | tail -1)
half=$(awk -v w="$wall" 'BEGIN{printf "%.1f", w/2}')
quiet=$(flagged a b)
echo "quiet A/A: $quiet flagged"
hogged_sweep c "$half" --settle off --quiet-threshold 100%
hog_off=$(flagged a c)
echo "hog, settle off, nothing marked: $hog_off flagged; $(beside c)"
hogged_sweep d "$half"
hog_on=$(flagged a d)
echo "hog, settle on, disturbed made again: $hog_on flagged; $(beside d)"
# A memory-bandwidth hog on the other CPU for the whole of the sweep.
taskset -c "$SHIFT_CPU" python3 -c 'import time; b=bytearray(256<<20); e=time.time()+3600
while time.time()<e: b[:]=b' &
hog=$!
trap 'kill "$hog" 2>/dev/null || true' EXIT
sweep e --settle off
kill "$hog"
shift_plain=$(flagged a e)
shift_line=$(head -1 "$OUT/a-e.txt")
shift_busy=$(grep -m1 '^interference:' "$OUT/a-e.txt" || echo "interference: not printed")
shift_normalized=$(flagged a e --normalize canary)
default_share="skipped (DEFAULT_SWEEP=0)"
if [ "${DEFAULT_SWEEP:-1}" != 0 ]; then
  rm -rf "${OUT:?}/default"
  # shellcheck disable=SC2086 # DEFAULT_ARGS is a list of flags
  "$BIN" sweep --out "$OUT/default" ${DEFAULT_ARGS:-} >"$OUT/default.log" 2>&1 \
    || { tail -5 "$OUT/default.log" >&2; echo "machine_watch.sh: default sweep failed" >&2; exit 1; }
  default_share="$(canary_share default) ${DEFAULT_ARGS:+(with $DEFAULT_ARGS)}"
fi

cat <<EOF

== issue 25 targets (machine_watch.sh; hog on CPU $HOG_CPU for ${half} s, memory hog on CPU $SHIFT_CPU) ==
quiet A/A (a, b):                                  $quiet flagged
hog half of c, settle off, nothing marked:         $hog_off flagged   (target: more than quiet)
  c: $(beside c)
hog half of d, settle on, disturbed made again:    $hog_on flagged   (target: at most quiet)
  d: $(beside d)
memory hog throughout e, plain:                    $shift_plain flagged
memory hog throughout e, --normalize canary:       $shift_normalized flagged   (target: at most quiet)
  $shift_line
  (target: the line above names the machine change)
  $shift_busy
  (on a machine with as many CPUs as the run uses, the "memory" hog shares the run's CPUs:
   this line says whether e was measured beside it)
canary share of wall time:
$(for s in a b c d e; do echo "  sweep $s: $(canary_share $s)"; done)
  default sweep: $default_share   (target: <= 3 %)
folders and logs: $OUT
EOF

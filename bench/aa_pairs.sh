#!/usr/bin/env bash
# bench/aa_pairs.sh — does a quiet A/A name a machine change, or flag a point? (issue 36, item 2)
#
# Runs PAIRS (default 5) A/A pairs of the 18-point sweep (copy, gather, zerocopy x 1 KiB,
# 16 KiB, 64 KiB x 1 and 4 flows, the sweep's default settings, BYTEPATH_SETTLE=on), the two
# sweeps of a pair one after the other, and compares each pair with `bytepath compare`. Per
# pair it prints:
#   - compare's machine line (the canary's new/old per component and its verdict);
#   - how many points compare flags faster or slower (after its correction);
#   - each sweep's wall time, and how its canaries were taken: how many in a process of their
#     own, and what a round's canary cost (its process started and ended, and the canary).
# Then a summary line: pairs naming a machine change (target: none of 5 quiet pairs) and pairs
# flagging any point. It informs; it exits 0 whatever the figures, 1 if a sweep or a
# comparison failed. A loaded machine makes the figures meaningless: run it alone.
#
# Environment: PAIRS=5 MECHANISMS=copy,gather,zerocopy SIZES=1K,16K,64K THREADS=1,4
#              SWEEP_ARGS= (more sweep flags, e.g. "--budget 0.5s" for a quick check)
#              SETTLE_S=10 BIN=<a bytepath binary> (default: a release build of this tree)
#              OUT=<dir> (kept)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

OUT="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bytepath-bench-aa.XXXXXX")}"
mkdir -p "$OUT"
command -v python3 >/dev/null || { echo "aa_pairs.sh: needs python3" >&2; exit 2; }
if [ -z "${BIN:-}" ]; then
  echo "aa_pairs.sh: building bytepath" >&2
  cargo build --release --quiet
  BIN=./target/release/bytepath
fi
PAIRS="${PAIRS:-5}"
export BYTEPATH_SETTLE=on
read -r -a EXTRA <<<"${SWEEP_ARGS:-}"

# Lets the machine settle before a sweep: the writeback of a build that just ended slowed
# system calls by half here and every point of the sweep that followed it by about 9 %
# (bench/repeatability.sh).
settle() {
  sync
  sleep "${SETTLE_S:-10}"
}

sweep() { # name
  local dir="$OUT/$1" start end
  rm -rf "$dir"
  settle
  start=$(date +%s.%N)
  "$BIN" sweep --mechanisms "${MECHANISMS:-copy,gather,zerocopy}" \
    --sizes "${SIZES:-1K,16K,64K}" --threads "${THREADS:-1,4}" "${EXTRA[@]}" \
    --out "$dir" >"$OUT/$1.log" 2>&1 \
    || { tail -5 "$OUT/$1.log" >&2; echo "aa_pairs.sh: sweep $1 failed" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$start $end" >"$OUT/$1.wall"
}

for pair in $(seq 1 "$PAIRS"); do
  echo "aa_pairs.sh: pair $pair of $PAIRS, sweep A" >&2
  sweep "$pair-a"
  echo "aa_pairs.sh: pair $pair of $PAIRS, sweep B" >&2
  sweep "$pair-b"
  "$BIN" compare "$OUT/$pair-a" "$OUT/$pair-b" >"$OUT/$pair-compare.txt" 2>&1 \
    || { cat "$OUT/$pair-compare.txt" >&2; echo "aa_pairs.sh: compare of pair $pair failed" >&2; exit 1; }
done

python3 - "$OUT" "$PAIRS" <<'PY'
import json, re, sys
out, pairs = sys.argv[1], int(sys.argv[2])

def canaries(folder):
    """How the folder's canaries were taken, and what a round's cost on average (ms)."""
    lines = [json.loads(l) for l in open(f"{folder}/canary.jsonl") if l.strip()]
    own = sum(1 for l in lines if l.get("process") == "own")
    walls = [l["wall_ms"] for l in lines if "wall_ms" in l]
    canary = [l["canary"]["elapsed_ms"] for l in lines if l.get("canary")]
    mean = lambda v: sum(v) / len(v) if v else float("nan")
    return f"{own} of {len(lines)} canaries in a process of their own, a round's canary {mean(walls):.1f} ms in all ({mean(canary):.1f} ms the canary itself)"

named = flagged_any = 0
for p in range(1, pairs + 1):
    text = open(f"{out}/{p}-compare.txt").read()
    machine = next((l for l in text.splitlines() if l.startswith("machine:")), "machine: (no line)")
    m = re.search(r"(\d+) points compared: (\d+) faster, (\d+) slower", text)
    total, faster, slower = map(int, m.groups()) if m else (0, 0, 0)
    changed = "the machine changed" in machine
    named += changed
    flagged_any += faster + slower > 0
    print(f"pair {p}: {faster + slower} of {total} points flagged ({faster} faster, {slower} slower); machine change {'NAMED' if changed else 'not named'}")
    print(f"  {machine}")
    for s in "ab":
        start, end = map(float, open(f"{out}/{p}-{s}.wall").read().split())
        print(f"  sweep {s.upper()}: {end - start:.1f} s wall; {canaries(f'{out}/{p}-{s}')}")
print(f"summary: {named} of {pairs} pairs named a machine change (target 0) -> {'PASS' if named == 0 else 'MISS'}; {flagged_any} of {pairs} pairs flagged any point")
PY
echo "results: $OUT (N-compare.txt, N-a/, N-b/)" >&2

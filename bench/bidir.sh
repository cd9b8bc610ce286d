#!/usr/bin/env bash
# bench/bidir.sh — what carrying both directions at once gives: `bytepath run --bidir` at SIZE
# (tcp, one flow, MECHANISM, pinned CLIENT_CPU,SERVER_CPU) against a one-way run of the same
# point, in interleaved rounds (order rotated each round). Per round the ratio is
#   (forward + reverse Gbit/s of the bidir run) / (2 × the one-way run's Gbit/s),
# i.e. the bidir flow against two one-way runs of the same size; 1.0 would mean the two
# directions cost each other nothing. Printed: each round, the median ratio, and a 95 %
# interval of the mean log ratio (Student's t over rounds, paired), with the verdict it
# supports ("below 1", "above 1", or "undecided": the interval holds 1).
#
# Timings taken while anything else runs are not final: run it alone.
# Environment: ROUNDS=6 DURATION=2 WARMUP=0.5 SIZE=64K MECHANISM=copy CLIENT_CPU=0 SERVER_CPU=1
#   BYTEPATH=<binary> (default: cargo build --release here)
# Exit status: 0 when the runs ran; 2 if a required command is missing; 1 if a run failed.
set -euo pipefail

ROUNDS="${ROUNDS:-6}"
DURATION="${DURATION:-2}"
WARMUP="${WARMUP:-0.5}"
SIZE="${SIZE:-64K}"
MECHANISM="${MECHANISM:-copy}"
CLIENT_CPU="${CLIENT_CPU:-0}"
SERVER_CPU="${SERVER_CPU:-1}"
PORT_BASE=0

BENCH=bidir
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ "$ROUNDS" =~ ^[2-9]$|^[1-9][0-9]+$ ]] || die "ROUNDS must be at least 2, got '$ROUNDS'"
require_cmds python3
[[ -n "${BYTEPATH:-}" ]] || build_bytepath

run_point() { # extra flags -> the JSON record on stdout
  "$BYTEPATH" run -m "$MECHANISM" -s "$SIZE" --pin "$CLIENT_CPU,$SERVER_CPU" --counters none \
    --duration "${DURATION}s" --warmup "${WARMUP}s" --json "$@"
}

: >"$WORK/rounds.tsv"
for ((round = 0; round < ROUNDS; round++)); do
  if ((round % 2 == 0)); then order=(bidir oneway); else order=(oneway bidir); fi
  for kind in "${order[@]}"; do
    if [[ $kind == bidir ]]; then
      run_point --bidir >"$WORK/bidir.json" || die "round $((round + 1)): the --bidir run failed"
    else
      run_point >"$WORK/oneway.json" || die "round $((round + 1)): the one-way run failed"
    fi
  done
  python3 - "$WORK/bidir.json" "$WORK/oneway.json" >>"$WORK/rounds.tsv" <<'PY'
import json, sys
b, o = (json.load(open(p)) for p in sys.argv[1:3])
assert b["bidir"]["all_delivered_each_way"], "bidir run lost bytes"
print(f'{b["bidir"]["forward_gbps"]}\t{b["bidir"]["reverse_gbps"]}\t{o["sides"][1]["throughput_gbps"]}')
PY
  log "round $((round + 1)): $(tail -1 "$WORK/rounds.tsv")"
done

python3 - "$WORK/rounds.tsv" "$SIZE" "$MECHANISM" <<'PY'
import math, statistics, sys
rows = [[float(x) for x in l.split("\t")] for l in open(sys.argv[1])]
ratios = [(f + r) / (2 * o) for f, r, o in rows]
logs = [math.log(x) for x in ratios]
n = len(logs)
# Student's t, 0.975 quantile, n-1 degrees of freedom (n >= 2).
T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}
t = T.get(n - 1, 2.0)
mean = statistics.mean(logs)
half = t * statistics.stdev(logs) / math.sqrt(n)
lo, hi = math.exp(mean - half), math.exp(mean + half)
verdict = "below 1 (each direction costs the other)" if hi < 1 else "above 1" if lo > 1 else "undecided (the interval holds 1)"
print(f"--bidir {sys.argv[3]} {sys.argv[2]} over tcp, {n} interleaved rounds")
print("| round | forward Gbit/s | reverse Gbit/s | one-way Gbit/s | (fwd+rev) / (2 × one-way) |")
print("|---|---|---|---|---|")
for i, ((f, r, o), x) in enumerate(zip(rows, ratios), 1):
    print(f"| {i} | {f:.2f} | {r:.2f} | {o:.2f} | {x:.3f} |")
print(f"median ratio {statistics.median(ratios):.3f}; geometric mean {math.exp(mean):.3f}, 95 % CI {lo:.3f} .. {hi:.3f}: {verdict}")
PY

#!/usr/bin/env bash
# bench/many_core.sh — issue 35's many-core checks in one script and one table (≤ 5 minutes):
# do bytepath's figures stay true when there are many CPUs to spread over?
#
#   roofline  the memcpy curve the sweep's probe measured (1, 2, 4 … N threads at once,
#             N = the CPUs allowed), and every point of a short seeds' matrix (copy and gather,
#             4 KiB, 64 KiB, 512 KiB, 1 to THREADS flows, stream) held against the ceiling of
#             the threads that copy in it: the largest "of memcpy roofline" per thread count,
#             as report.md states it. Target: ≤ 100 % at every point, or the cell says why.
#   servers   the five models at 15 and 1000 clients with bytepath's default load generator
#             (one client thread per CPU of the load side): per point req/s, client threads,
#             client CPU per thread, whether it was marked load-limited (≥ 90 %) and the
#             clients never served. Target: every point below 90 % or marked (and then
#             ranked nowhere: the answers say so).
#   crr       bench/crr.sh in both close modes (ROUNDS rounds): bytepath against the bare loop
#             and neper, like with like. Target: within ±10 % of neper in both modes.
#
# On a 2-CPU machine it runs too, with what 2 CPUs allow (the curve stops at 2, the load side
# is one CPU). Run it alone: it measures.
#
# Environment: THREADS=1,2,4,8 SIZES=4K,64K,512K CLIENTS=15,1000 ROUNDS=2 SERVERS_DURATION=1s
#   BYTEPATH=<binary> (default: cargo build --release here) NEPER_SRC=<neper source tree>
#   OUT=<folder kept> (default: a temporary one)
# Exit status: 0 when everything ran (a missed target is reported, not an error); 1 if a part
# failed; 2 if a required command is missing or a setting is invalid.
set -euo pipefail

THREADS="${THREADS:-1,2,4,8}"
SIZES="${SIZES:-4K,64K,512K}"
CLIENTS="${CLIENTS:-15,1000}"
ROUNDS="${ROUNDS:-2}"
SERVERS_DURATION="${SERVERS_DURATION:-1s}"
PORT_BASE=0 # bytepath binds its own ports

BENCH=many_core
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { log "ROUNDS must be a positive integer, got '$ROUNDS'"; exit 2; }
[[ "$THREADS" =~ ^[0-9]+(,[0-9]+)*$ ]] || { log "THREADS must be a comma list of counts, got '$THREADS'"; exit 2; }
[[ "$CLIENTS" =~ ^[0-9]+(,[0-9]+)*$ ]] || { log "CLIENTS must be a comma list of counts, got '$CLIENTS'"; exit 2; }
require_cmds python3 nproc
[[ -n "${BYTEPATH:-}" ]] || build_bytepath
OUT="${OUT:-$WORK}"
mkdir -p "$OUT"
log "$(nproc) CPUs allowed; results under $OUT"

log "roofline: the seeds' matrix (copy, gather × $SIZES × $THREADS flows), short visits"
"$BYTEPATH" sweep --mechanisms copy,gather --sizes "$SIZES" --threads "$THREADS" \
  --patterns stream --visits 2 --visit 50ms --budget 0.2s --warmup 10ms --settle off \
  --out "$OUT/sweep" >"$OUT/sweep.log" 2>&1 || { tail -5 "$OUT/sweep.log" >&2; die "the sweep failed"; }

log "servers: five models at $CLIENTS clients, the default load generator"
"$BYTEPATH" servers --models iterative,threaded,select,epoll,uring --clients "$CLIENTS" \
  --duration "$SERVERS_DURATION" --warmup 100ms --visits 2 --settle off \
  --out "$OUT/servers" >"$OUT/servers.log" 2>&1 || { tail -5 "$OUT/servers.log" >&2; die "servers failed"; }

log "crr: both close modes, $ROUNDS rounds"
ROUNDS="$ROUNDS" DURATION=2 WARMUP=1 BYTEPATH="$BYTEPATH" bash "$HERE/crr.sh" >"$OUT/crr.txt" 2>"$OUT/crr.log" ||
  { tail -5 "$OUT/crr.log" >&2; die "bench/crr.sh failed"; }

python3 "$HERE/many_core_table.py" "$OUT" "$(nproc)"

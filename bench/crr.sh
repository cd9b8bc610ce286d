#!/usr/bin/env bash
# bench/crr.sh — what a connection costs: bytepath's `--pattern crr` transactions/s on
# loopback TCP, one flow, client on CLIENT_CPU and server on SERVER_CPU, against
#   bare   a C connect/send/recv/close loop (bench/bare/crr.c, built here with cc), and
#   neper  google/neper's tcp_crr built from source (NEPER_SRC=<its source tree>, else a
#          `git clone` of https://github.com/google/neper; if neither works the table says
#          the peer could not be built and its column is empty).
# All three use SIZE-byte requests and responses and no socket options (as netperf's
# TCP_CRR). Targets: bytepath >= 0.95x the bare loop, within ±10 % of neper.
#
# Interleaving: each round runs the tools back to back, their order rotated from round to
# round, and the ratios are taken within the round (paired); the table gives the median of
# the per-round ratios and their min..max. Timings taken while anything else runs are not
# the floor: run it alone (flock -x /tmp/bytepath-cpu.lock bench/crr.sh).
#
# LONG=60 adds one `bytepath run -p crr` of LONG seconds after the rounds and reports whether
# it completed (no port ran out) and the TIME_WAIT it left.
#
# Environment: ROUNDS=5 DURATION=3 WARMUP=1 SIZE=64 CLIENT_CPU=0 SERVER_CPU=1 LONG=0
#   BYTEPATH=<binary> (default: cargo build --release here) NEPER_SRC=<dir>
# Exit status: 0 when the runs ran (targets inform, they do not fail it); 2 if a required
# command is missing; 1 if a run failed.
set -euo pipefail

ROUNDS="${ROUNDS:-5}"
DURATION="${DURATION:-3}"
WARMUP="${WARMUP:-1}"
SIZE="${SIZE:-64}"
CLIENT_CPU="${CLIENT_CPU:-0}"
SERVER_CPU="${SERVER_CPU:-1}"
LONG="${LONG:-0}"
PORT_BASE=0 # every listener here binds port 0

BENCH=crr
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, got '$ROUNDS'"
require_cmds cc python3 taskset
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ -n "${BYTEPATH:-}" ]] || build_bytepath

cc -O2 -pthread -o "$WORK/bare_crr" "$HERE/bare/crr.c" || die "building bench/bare/crr.c failed"

NEPER=""
build_neper() {
  local src="${NEPER_SRC:-}"
  if [[ -z "$src" ]]; then
    need_cmd git || return 1
    git clone -q --depth 1 https://github.com/google/neper "$WORK/neper" >&2 2>/dev/null || return 1
    src="$WORK/neper"
  fi
  cp -r "$src" "$WORK/neper-build" && make -s -C "$WORK/neper-build" tcp_crr >&2 || return 1
  NEPER="$WORK/neper-build/tcp_crr"
}
build_neper || log "neper's tcp_crr could not be built (give NEPER_SRC=<source tree>): its column stays empty"

run_bytepath() {
  "$BYTEPATH" run -p crr -m send -s "$SIZE" --pin "$CLIENT_CPU,$SERVER_CPU" --counters none \
    --duration "${DURATION}s" --warmup "${WARMUP}s" --json >"$WORK/bp.json" || return 1
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sides"][0]["messages_per_s"])' "$WORK/bp.json"
}
run_bare() {
  "$WORK/bare_crr" "$SIZE" "$WARMUP" "$DURATION" "$CLIENT_CPU" "$SERVER_CPU" | awk '{print $2}'
}
run_neper() { # in $WORK: neper writes a log file per process into its working directory
  local length
  length=$(python3 -c "print(max(1, round($WARMUP + $DURATION)))")
  (cd "$WORK" && exec taskset -c "$SERVER_CPU" "$NEPER" -l "$length" -Q "$SIZE" -R "$SIZE") >"$WORK/neper-server.out" 2>&1 &
  local server=$!
  sleep 0.3
  (cd "$WORK" && taskset -c "$CLIENT_CPU" "$NEPER" -c -H 127.0.0.1 -l "$length" -Q "$SIZE" -R "$SIZE") >"$WORK/neper.out" 2>&1 || true
  wait "$server" || true
  awk -F= '$1 == "throughput" {print $2}' "$WORK/neper.out"
}

TOOLS=(bytepath bare)
[[ -n "$NEPER" ]] && TOOLS+=(neper)
: >"$WORK/rounds.tsv"
for ((round = 0; round < ROUNDS; round++)); do
  declare -A got=()
  for ((i = 0; i < ${#TOOLS[@]}; i++)); do
    tool="${TOOLS[$(((i + round) % ${#TOOLS[@]}))]}"
    got[$tool]="$("run_$tool")" || die "round $((round + 1)): $tool failed"
  done
  printf '%s\t%s\t%s\n' "${got[bytepath]}" "${got[bare]}" "${got[neper]:-}" >>"$WORK/rounds.tsv"
  log "round $((round + 1)): bytepath ${got[bytepath]}, bare ${got[bare]}, neper ${got[neper]:-n/a} transactions/s"
  unset got
done

python3 - "$WORK/rounds.tsv" "$SIZE" "$ROUNDS" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
num = lambda v: float(v) if v else None
def line(name, index, target):
    pairs = [(num(r[0]), num(r[index])) for r in rows if num(r[index])]
    if not pairs:
        print(f"| bytepath / {name} | n/a (peer not built) | | {target} |")
        return
    ratios = [b / p for b, p in pairs]
    print(f"| bytepath / {name} | {statistics.median(ratios):.3f} | {min(ratios):.3f}..{max(ratios):.3f} | {target} |")
print(f"crr over loopback TCP, {sys.argv[2]} B each way, {sys.argv[3]} interleaved rounds (per-round ratios)")
for i, tool in enumerate(["bytepath", "bare", "neper"]):
    v = [num(r[i]) for r in rows if num(r[i])]
    print(f"  {tool:<9} median {statistics.median(v):.0f} transactions/s" if v else f"  {tool:<9} n/a")
print("| ratio | median | min..max | target |")
print("|---|---|---|---|")
line("bare loop", 1, ">= 0.95")
line("neper tcp_crr", 2, "0.90 .. 1.10")
PY

if [[ "$LONG" != 0 ]]; then
  log "one ${LONG} s crr run: do the client's ports last?"
  if "$BYTEPATH" run -p crr -m send -s "$SIZE" --pin "$CLIENT_CPU,$SERVER_CPU" --counters none \
    --duration "${LONG}s" --warmup 0s --json >"$WORK/long.json"; then
    python3 - "$WORK/long.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["crr"]
print("long run: {}, {} transactions in {:.0f} s, TIME_WAIT at end {}, ports {}, tcp_tw_reuse {}".format(
    r["status"], c["client_transactions"], r["measured_s"], c["time_wait_at_end"],
    c["ephemeral_port_range"], c["tcp_tw_reuse"]))
PY
  else
    die "the ${LONG} s crr run failed: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["errors"])' "$WORK/long.json" 2>/dev/null)"
  fi
fi

#!/usr/bin/env bash
# bench/crr.sh — what a connection costs: bytepath's `--pattern crr` transactions/s on
# loopback TCP, one flow, client on CLIENT_CPU and server on SERVER_CPU, against
#   bare   a C connect/send/recv/close loop (bench/bare/crr.c, built here with cc), and
#   neper  google/neper's tcp_crr built from source (NEPER_SRC=<its source tree>, else a
#          `git clone` of https://github.com/google/neper; if neither works the table says
#          the peer could not be built and its column is empty).
# All three use SIZE-byte requests and responses and no other socket options (as netperf's
# TCP_CRR).
#
# Like with like: how the client closes changes what a transaction costs. A graceful close
# (FIN) leaves the client's side in TIME_WAIT; an abortive one (SO_LINGER 0) sends a RST and
# leaves nothing. neper's client closes with a reset unless given --time-wait; bytepath and
# the bare loop close with FIN unless told otherwise. So each close mode is measured with the
# three tools set alike, and ratios are taken only within a mode:
#   fin    bytepath (default)        bare loop `fin`     neper --time-wait
#   reset  bytepath --linger-zero    bare loop `reset`   neper (its default)
# Targets: bytepath >= 0.95x the bare loop and within ±10 % of neper, in each mode.
#
# Interleaving: each round runs every (mode, tool) run back to back, their order rotated
# from round to round, and the ratios are taken within the round and the mode (paired); the
# table gives the median of the per-round ratios and their min..max. Timings taken while
# anything else runs are not the floor: run it alone
# (flock -x /tmp/bytepath-cpu.lock bench/crr.sh).
#
# LONG=60 adds one `bytepath run -p crr` of LONG seconds (FIN close) after the rounds and
# reports whether it completed (no port ran out) and the TIME_WAIT it left.
#
# Environment: ROUNDS=5 DURATION=3 WARMUP=1 SIZE=64 CLIENT_CPU=0 SERVER_CPU=1 LONG=0
#   MODES="fin reset" BYTEPATH=<binary> (default: cargo build --release here) NEPER_SRC=<dir>
# Exit status: 0 when the runs ran (targets inform, they do not fail it); 2 if a required
# command is missing or a setting is invalid; 1 if a run failed.
set -euo pipefail

ROUNDS="${ROUNDS:-5}"
DURATION="${DURATION:-3}"
WARMUP="${WARMUP:-1}"
SIZE="${SIZE:-64}"
CLIENT_CPU="${CLIENT_CPU:-0}"
SERVER_CPU="${SERVER_CPU:-1}"
LONG="${LONG:-0}"
MODES="${MODES:-fin reset}"
PORT_BASE=0 # every listener here binds port 0

BENCH=crr
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, got '$ROUNDS'"
read -r -a MODE_LIST <<<"$MODES"
((${#MODE_LIST[@]})) || die "MODES is empty: give fin, reset or both"
for mode in "${MODE_LIST[@]}"; do
  [[ "$mode" == fin || "$mode" == reset ]] || die "MODES: '$mode' is not a close mode (fin or reset)"
done
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

# Each runner takes the close mode (fin or reset) and prints transactions/s.
run_bytepath() {
  local close=()
  [[ "$1" == reset ]] && close=(--linger-zero)
  "$BYTEPATH" run -p crr -m send -s "$SIZE" --pin "$CLIENT_CPU,$SERVER_CPU" --counters none \
    "${close[@]}" --duration "${DURATION}s" --warmup "${WARMUP}s" --json >"$WORK/bp.json" || return 1
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sides"][0]["messages_per_s"])' "$WORK/bp.json"
}
run_bare() {
  "$WORK/bare_crr" "$SIZE" "$WARMUP" "$DURATION" "$CLIENT_CPU" "$SERVER_CPU" "$1" | awk '{print $2}'
}
run_neper() { # in $WORK: neper writes a log file per process into its working directory
  local length close=()
  [[ "$1" == fin ]] && close=(--time-wait)
  length=$(python3 -c "print(max(1, round($WARMUP + $DURATION)))")
  (cd "$WORK" && exec taskset -c "$SERVER_CPU" "$NEPER" -l "$length" -Q "$SIZE" -R "$SIZE") >"$WORK/neper-server.out" 2>&1 &
  local server=$!
  sleep 0.3
  (cd "$WORK" && taskset -c "$CLIENT_CPU" "$NEPER" -c -H 127.0.0.1 -l "$length" -Q "$SIZE" -R "$SIZE" "${close[@]}") >"$WORK/neper.out" 2>&1 || true
  wait "$server" || true
  awk -F= '$1 == "throughput" {print $2}' "$WORK/neper.out"
}

TOOLS=(bytepath bare)
[[ -n "$NEPER" ]] && TOOLS+=(neper)
RUNS=()
for mode in "${MODE_LIST[@]}"; do
  for tool in "${TOOLS[@]}"; do RUNS+=("$mode:$tool"); done
done
: >"$WORK/rounds.tsv"
for ((round = 0; round < ROUNDS; round++)); do
  declare -A got=()
  for ((i = 0; i < ${#RUNS[@]}; i++)); do
    run="${RUNS[$(((i + round) % ${#RUNS[@]}))]}"
    got[$run]="$("run_${run#*:}" "${run%%:*}")" || die "round $((round + 1)): ${run#*:} (${run%%:*} close) failed"
  done
  for mode in "${MODE_LIST[@]}"; do
    printf '%s\t%s\t%s\t%s\n' "$mode" "${got[$mode:bytepath]}" "${got[$mode:bare]}" "${got[$mode:neper]:-}" >>"$WORK/rounds.tsv"
    log "round $((round + 1)), $mode close: bytepath ${got[$mode:bytepath]}, bare ${got[$mode:bare]}, neper ${got[$mode:neper]:-n/a} transactions/s"
  done
  unset got
done

python3 - "$WORK/rounds.tsv" "$SIZE" "$ROUNDS" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
num = lambda v: float(v) if v else None
PAIRING = {
    "fin": "bytepath default, bare loop FIN, neper --time-wait",
    "reset": "bytepath --linger-zero, bare loop SO_LINGER 0, neper default (SO_LINGER 0)",
}
print(f"crr over loopback TCP, {sys.argv[2]} B each way, {sys.argv[3]} interleaved rounds (per-round ratios within a close mode)")
for mode in [m for m in PAIRING if any(r[0] == m for r in rows)]:
    mine = [r[1:] for r in rows if r[0] == mode]
    print(f"{mode} close: {PAIRING[mode]}")
    for i, tool in enumerate(["bytepath", "bare", "neper"]):
        v = [num(r[i]) for r in mine if num(r[i])]
        print(f"  {tool:<9} median {statistics.median(v):.0f} transactions/s" if v else f"  {tool:<9} n/a")
print("| close | ratio | median | min..max | target |")
print("|---|---|---|---|---|")
for mode in [m for m in PAIRING if any(r[0] == m for r in rows)]:
    mine = [r[1:] for r in rows if r[0] == mode]
    for name, index, target in [("bare loop", 1, ">= 0.95"), ("neper tcp_crr", 2, "0.90 .. 1.10")]:
        pairs = [(num(r[0]), num(r[index])) for r in mine if num(r[index])]
        if not pairs:
            print(f"| {mode} | bytepath / {name} | n/a (peer not built) | | {target} |")
            continue
        ratios = [b / p for b, p in pairs]
        print(f"| {mode} | bytepath / {name} | {statistics.median(ratios):.3f} | {min(ratios):.3f}..{max(ratios):.3f} | {target} |")
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

#!/usr/bin/env bash
# bench/peers.sh — compare bytepath against the established peer tools.
#
# What it measures, in one run, with the same CPU placement for both tools:
#   1. bytepath `send` stream vs `iperf3 -l SIZE` (single TCP flow over
#      loopback, receive size = message size) at 4K, 64K and 512K:
#      throughput in Gbit/s as seen by the RECEIVER (bytepath sides[1],
#      iperf3 end.sum_received), like with like.
#   2. bytepath `rr` at 64 B vs `sockperf ping-pong --tcp -m 64`: p50 ROUND
#      TRIP in microseconds. sockperf reports half the round trip (each
#      sample is rtt/2), so its p50 is DOUBLED here; bytepath's figure is
#      the full round trip and is used as is.
# Both comparisons run cross-CPU (sender/client on CPU 0, receiver/server on
# CPU 1) and same-CPU (everything on CPU 0), each bytepath run immediately
# followed by its peer run so drift affects both alike.
#
# Pairing: every peer option that changes what is measured is matched, and
# printed above the table:
#   stream  iperf3 -l SIZE: its server reads SIZE per call too (the client
#           sends it the length); bytepath receives SIZE per recv (the
#           default --recv-size). Neither sets TCP_NODELAY or buffer sizes.
#           iperf3 -O WARMUP drops its first seconds as bytepath's --warmup.
#   rr      sockperf ping-pong sets TCP_NODELAY (its default outside
#           throughput mode); bytepath sets it on every TCP rr flow. One
#           request in flight on each (sockperf --mps max, bytepath rr).
#           sockperf's latency is half the round trip (doubled here).
# (crr's peer, neper, closes with a reset unless told otherwise: bench/crr.sh
# measures both close modes.)
#
# Why: a measuring tool must not be slower than what it measures. If bytepath
# moves fewer bytes than iperf3, or needs longer round trips than sockperf,
# its own overhead would be part of every figure it reports.
# Targets: bytepath throughput >= 1.0x iperf3's; bytepath p50 RTT <= 1.0x
# sockperf's. Ratios on a noisy 2-vCPU VM vary from run to run; use REPEAT
# to see the spread.
#
# Exit status: 0 when everything ran (a benchmark informs, it does not fail
# CI, so BELOW TARGET rows do not change it); 2 if iperf3/sockperf is missing
# and could not be installed; 1 if a run failed.
#
# Environment:
#   DURATION=5         measured seconds per run (integer), same for every tool
#   SIZES="4K 64K 512K" stream message sizes (K/M suffixes = KiB/MiB)
#   REPEAT=1           repeat each bytepath/peer pair this many times
#   SENDER_CPU=0 RECEIVER_CPU=1   CPUs used for "cross"; "same" uses SENDER_CPU
#   PORT_BASE=15201    first loopback port for the peer servers
#
# Only 127.0.0.1 is used. Every run is bounded by `timeout`.

set -euo pipefail

DURATION="${DURATION:-5}"
SIZES="${SIZES:-4K 64K 512K}"
REPEAT="${REPEAT:-1}"
SENDER_CPU="${SENDER_CPU:-0}"
RECEIVER_CPU="${RECEIVER_CPU:-1}"
PORT_BASE="${PORT_BASE:-15201}"
RR_SIZE=64
WARMUP=1 # seconds of warm-up, excluded from the figures of every tool

BENCH=peers
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ "$DURATION" =~ ^[1-9][0-9]*$ ]] || die "DURATION must be a positive integer (seconds), got '$DURATION'"
[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || die "REPEAT must be a positive integer, got '$REPEAT'"
[[ "$PORT_BASE" =~ ^[0-9]+$ ]] || die "PORT_BASE must be a port number, got '$PORT_BASE'"
for c in "$SENDER_CPU" "$RECEIVER_CPU"; do
  [[ "$c" =~ ^[0-9]+$ ]] || die "CPU numbers must be integers, got '$c'"
done
[[ -n "${SIZES// /}" ]] || die "SIZES is empty"

# Bound on any single run: measured time + warm-up + generous slack.
RUN_LIMIT=$((DURATION + WARMUP + 30))

# ---------------------------------------------------------------- tools ----
missing=()
for t in iperf3 sockperf; do need_cmd "$t" || missing+=("$t"); done
if ((${#missing[@]})); then
  install_pkgs "${missing[@]}" || true
  for t in "${missing[@]}"; do
    need_cmd "$t" || { echo "peers.sh: $t is missing and could not be installed" >&2; exit 2; }
  done
fi
require_cmds python3 taskset timeout cargo

build_bytepath


# -------------------------------------------------------------- runners ----
# Each sets RESULT to one number. They run in the main shell (not in $(...))
# so the servers they start stay known to the EXIT trap.

bytepath_json() { # out pattern size pin
  local out="$1" pattern="$2" size="$3" pin="$4"
  if ! timeout "$RUN_LIMIT" "$BYTEPATH" run --mechanism send --pattern "$pattern" \
      --size "$size" --threads 1 --duration "${DURATION}s" --warmup "${WARMUP}s" \
      --pin "$pin" --json >"$out" 2>"$out.err"; then
    cat "$out.err" >&2
    die "bytepath run ($pattern, $size, pin $pin) failed"
  fi
}

RESULT=""

bytepath_stream() { # size pin -> receiver Gbit/s
  local out="$WORK/bp-stream.json"
  bytepath_json "$out" stream "$1" "$2"
  RESULT="$(python3 - "$out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
if d.get("status") != "completed":
    sys.exit(f"status {d.get('status')!r}, errors {d.get('errors')}")
v = d["sides"][1]["throughput_gbps"]  # receiver: like iperf3's sum_received
if not v or v <= 0:
    sys.exit("no throughput")
print(v)
EOF
)" || die "could not parse bytepath stream output"
}

bytepath_rr() { # pin -> p50 round trip, us
  local out="$WORK/bp-rr.json"
  bytepath_json "$out" rr "$RR_SIZE" "$1"
  RESULT="$(python3 - "$out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
if d.get("status") != "completed":
    sys.exit(f"status {d.get('status')!r}, errors {d.get('errors')}")
lat = d["sides"][0]["latency_ns"]  # client: full round trip
if not lat or not lat.get("p50"):
    sys.exit("no round-trip latency")
print(lat["p50"] / 1000.0)
EOF
)" || die "could not parse bytepath rr output"
}

# ---------------------------------------------------------------- table ----
ROWS=()
add_row() { ROWS+=("$1|$2|$3|$4|$5|$6"); } # case, bytepath, peer, ratio, target, verdict

verdict() { # ratio op(ge|le)
  python3 -c "
import sys
r = float(sys.argv[1])
ok = r >= 1.0 if sys.argv[2] == 'ge' else r <= 1.0
print('PASS' if ok else 'BELOW TARGET')" "$1" "$2"
}

placements=("cross:$SENDER_CPU:$RECEIVER_CPU" "same:$SENDER_CPU:$SENDER_CPU")

log "duration ${DURATION}s (+${WARMUP}s warm-up) per run; sizes: $SIZES; repeat: $REPEAT"
for ((rep = 1; rep <= REPEAT; rep++)); do
  tag=""
  ((REPEAT > 1)) && tag=" #$rep"
  for pl in "${placements[@]}"; do
    IFS=: read -r pname scpu rcpu <<<"$pl"
    pin="$scpu,$rcpu"
    for size in $SIZES; do
      log "stream $size $pname$tag: bytepath (pin $pin)"
      bytepath_stream "$size" "$pin"
      bp="$RESULT"
      log "stream $size $pname$tag: iperf3 (client CPU $scpu, server CPU $rcpu)"
      iperf3_stream "$size" "$scpu" "$rcpu"
      pe="$RESULT"
      r="$(ratio "$bp" "$pe")"
      add_row "stream $size $pname$tag" "$(fmt "$bp" .2f) Gbit/s" "$(fmt "$pe" .2f) Gbit/s (iperf3)" \
        "${r}x" ">= 1.0" "$(verdict "$r" ge)"
    done
    log "rr ${RR_SIZE}B $pname$tag: bytepath (pin $pin)"
    bytepath_rr "$pin"
    bp="$RESULT"
    log "rr ${RR_SIZE}B $pname$tag: sockperf (client CPU $scpu, server CPU $rcpu)"
    # sockperf excludes ~0.4 s of -t as its own warm-up: give it bytepath's warm-up + measured time.
    sockperf_rtt tcp "$scpu" "$rcpu" "$RR_SIZE" "$((DURATION + WARMUP))" "$RUN_LIMIT"
    RESULT="$RESULT2" # p50 full round trip
    pe="$RESULT"
    r="$(ratio "$bp" "$pe")"
    add_row "rr ${RR_SIZE}B $pname$tag" "$(fmt "$bp" .1f) us RTT" "$(fmt "$pe" .1f) us RTT (sockperf x2)" \
      "${r}x" "<= 1.0" "$(verdict "$r" le)"
  done
done

echo
echo "bytepath vs peers: ${DURATION}s measured per run, loopback TCP, 1 flow"
echo "  cross = sender/client on CPU $SENDER_CPU, receiver/server on CPU $RECEIVER_CPU; same = all on CPU $SENDER_CPU"
echo "  stream: receiver-side Gbit/s, ratio = bytepath / iperf3 (target >= 1.0)"
echo "  rr: p50 full round trip, sockperf's half-RTT p50 doubled, ratio = bytepath / sockperf (target <= 1.0)"
echo "  pairing: stream both read SIZE per call, no TCP_NODELAY, no buffer sizes set, warm-up dropped by both;"
echo "           rr both TCP_NODELAY, one request in flight"
echo
{
  echo "case|bytepath|peer|ratio|target|result"
  printf '%s\n' "${ROWS[@]}"
} | print_table 0 5
echo
echo "(ratios on a noisy 2-vCPU VM vary from run to run; REPEAT=N repeats every pair)"
exit 0

#!/usr/bin/env bash
# bench/mesh.sh — bytepath mesh on four network namespaces joined by a bridge (a fifth
# namespace holds the bridge and runs the driver), each running `bytepath server
# --allow-peers` for the bridge's subnet. Host 4's link has MTU SLOW_MTU, the others FAST_MTU.
#
# What it measures, per message size (4K and 64K, send, TCP stream, one flow): a full mesh of
# 12 ordered pairs, VISITS visits each, one pair at a time; then
#   wall        the mesh command's own wall time, start to end
#   pairs       the sum of every run's duration as the driver timed it (request to record)
#   measured    the sum of what the runs measured plus their warm-ups (the floor)
#   overhead    (wall - pairs) / wall: what scheduling, checks and the report cost
# and what the report found: the slow hosts (expected: host 4 at 4K) and the pairs it flagged
# slow on their own.
#
# Exit status: 0 when everything ran; 2 when not root or ip is missing; 1 if a mesh failed.
#
# Environment:
#   DURATION=1s WARMUP=200ms VISITS=3 FAST_MTU=9000 SLOW_MTU=1500 SIZES="4K 64K"

set -euo pipefail

DURATION="${DURATION:-1s}"
WARMUP="${WARMUP:-200ms}"
VISITS="${VISITS:-3}"
FAST_MTU="${FAST_MTU:-9000}"
SLOW_MTU="${SLOW_MTU:-1500}"
SIZES="${SIZES:-4K 64K}"
# shellcheck disable=SC2034  # lib.sh reads it; its port helpers are not used here
PORT_BASE=0

BENCH='mesh'
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "$BENCH: network namespaces need root" >&2; exit 2; }
require_cmds ip python3 cargo
build_bytepath

NS="bpmb$$"
SWITCH="$NS-sw"
HOSTS=()
TOKEN="$WORK/token"
"$BYTEPATH" keygen "$TOKEN" # 256 random bits, mode 0600 (a weak or readable token is refused)

# shellcheck disable=SC2317  # invoked by the EXIT trap
remove_namespaces() {
  local ns
  for ns in "${HOSTS[@]}" "$SWITCH"; do ip netns del "$ns" 2>/dev/null || true; done
}
trap 'cleanup; remove_namespaces' EXIT

ip netns add "$SWITCH"
ip -n "$SWITCH" link add br0 type bridge
ip -n "$SWITCH" link set br0 up
ip -n "$SWITCH" link set lo up
ip -n "$SWITCH" addr add 10.78.0.254/24 dev br0
for i in 0 1 2 3; do
  ns="$NS-h$i"
  HOSTS+=("$ns")
  mtu="$FAST_MTU"
  [[ $i -eq 3 ]] && mtu="$SLOW_MTU"
  ip netns add "$ns"
  ip link add v0 netns "$ns" mtu "$mtu" type veth peer name "p$i" netns "$SWITCH" mtu "$mtu"
  ip -n "$SWITCH" link set "p$i" master br0 up
  ip -n "$ns" link set v0 up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "10.78.0.$((i + 1))/24" dev v0
  log="$WORK/server-$i.log"
  ip netns exec "$ns" "$BYTEPATH" server --bind "10.78.0.$((i + 1))" --port 5301 \
    --allow-peers 10.78.0.0/24 --token-file "$TOKEN" >"$log" 2>&1 &
  SERVER_PIDS+=("$!")
done
for i in 0 1 2 3; do
  for _ in $(seq 100); do grep -q "listening on" "$WORK/server-$i.log" && break; sleep 0.05; done
  grep -q "listening on" "$WORK/server-$i.log" || { cat "$WORK/server-$i.log" >&2; die "server $i did not start"; }
done
HOST_LIST="10.78.0.1:5301,10.78.0.2:5301,10.78.0.3:5301,10.78.0.4:5301"

log "4 hosts (host 4 at MTU $SLOW_MTU, the others $FAST_MTU), $VISITS visits of $DURATION after $WARMUP"
rows="size|runs|wall s|pairs s|measured s|overhead|slow hosts|pairs flagged slow"
for size in $SIZES; do
  out="$WORK/mesh-$size"
  start=$(date +%s.%N)
  if ! ip netns exec "$SWITCH" "$BYTEPATH" mesh --hosts "$HOST_LIST" --token-file "$TOKEN" \
      --mechanisms send --sizes "$size" --patterns stream --duration "$DURATION" \
      --warmup "$WARMUP" --visits "$VISITS" --out "$out" >"$WORK/mesh-$size.txt" 2>&1; then
    cat "$WORK/mesh-$size.txt" >&2
    die "bytepath mesh at $size failed"
  fi
  end=$(date +%s.%N)
  row="$(python3 - "$out" "$start" "$end" <<'PY'
import json, sys
out, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
records = [json.loads(l) for l in open(f"{out}/results.jsonl")]
wall = end - start
pairs = sum((r["mesh"]["ended_unix_ms"] - r["mesh"]["started_unix_ms"]) / 1e3 for r in records)
measured = sum(r["measured_s"] + r["config"]["warmup_s"] for r in records)
report = open(f"{out}/report.md").read().splitlines()
flagged = [l.split(" | ")[0].lstrip("| ").replace("10.78.0.", "h").replace(":5301", "")
           for l in report if l.startswith("| 10.78.0.") and " → " in l]
slow = [l.split()[1].replace("10.78.0.", "h").replace(":5301", "")
        for l in report if l.startswith("Host ") and " is slow:" in l]
print(f"{len(records)}|{wall:.1f}|{pairs:.1f}|{measured:.1f}|{(wall - pairs) / wall * 100:.1f} %|"
      + (", ".join(slow) or "none") + "|" + (", ".join(flagged) or "none"))
PY
)"
  rows+=$'\n'"$size|$row"
  grep -A6 "^| from" "$out/report.md" >&2 || true
done
echo "$rows" | print_table 0 6 7

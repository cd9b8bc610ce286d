#!/usr/bin/env bash
# bench/netns.sh — the seeds' send mechanisms on loopback beside a veth pair between two
# network namespaces (bytepath run --netns), at two veth MTUs.
#
# What it measures, in one run: bytepath run -m copy|gather|zerocopy -s 4K|64K, TCP stream,
# one flow, pinned cross (sender CPU SENDER_CPU, receiver RECEIVER_CPU), no perf counters, on
#   loopback         both sides in this namespace (127.0.0.1, lo's MTU 65536)
#   veth mtu 1500    --netns --mtu 1500  (a real Ethernet link's MTU)
#   veth mtu 65520   --netns --mtu 65520
# Reported per path, mechanism and size: Gbit/s received whole, and for zerocopy the share of
# sends the kernel copied anyway (MSG_ZEROCOPY completions flagged SO_EE_CODE_ZEROCOPY_COPIED:
# every packet delivered to a local socket is copied, veth included).
#
# Exit status: 0 when everything ran; 2 when not root or ip is missing (--netns needs both);
# 1 if a run failed.
#
# Environment:
#   DURATION=5s      measured time per run
#   WARMUP=500ms     warm-up per run
#   MTUS="1500 65520"
#   SENDER_CPU=0 RECEIVER_CPU=1

set -euo pipefail

DURATION="${DURATION:-5s}"
WARMUP="${WARMUP:-500ms}"
MTUS="${MTUS:-1500 65520}"
SENDER_CPU="${SENDER_CPU:-0}"
RECEIVER_CPU="${RECEIVER_CPU:-1}"
# shellcheck disable=SC2034  # lib.sh reads it; its port helpers are not used here
PORT_BASE=0

BENCH='netns'
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

for c in "$SENDER_CPU" "$RECEIVER_CPU"; do
  [[ "$c" =~ ^[0-9]+$ ]] || die "CPU numbers must be integers, got '$c'"
done
for m in $MTUS; do
  [[ "$m" =~ ^[0-9]+$ ]] || die "MTUS must be whole numbers, got '$m'"
done
[[ $(id -u) -eq 0 ]] || { echo "$BENCH: --netns needs root" >&2; exit 2; }
require_cmds ip python3 cargo
build_bytepath

MECHANISMS=(copy gather zerocopy)
SIZES=(4K 64K)

# One run -> "Gbit/s copied%" (copied% is - unless zerocopy).
measure() { # label mechanism size [--netns --mtu N]
  local label="$1" mech="$2" size="$3" out="$WORK/run.json"
  shift 3
  if ! "$BYTEPATH" run -m "$mech" -s "$size" -d "$DURATION" --warmup "$WARMUP" \
      --pin "$SENDER_CPU,$RECEIVER_CPU" --counters none --json "$@" >"$out" 2>"$WORK/run.err"; then
    cat "$WORK/run.err" >&2
    die "bytepath run $mech $size on $label failed"
  fi
  python3 - "$out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
gbps = r["sides"][1]["throughput_gbps"]
zc = (r.get("zerocopy") or {}).get("copied_anyway_percent")
print(f"{gbps:.2f} {'-' if zc is None else format(zc, '.0f') + ' %'}")
PY
}

PATHS=("loopback")
for m in $MTUS; do PATHS+=("veth mtu $m"); done

printf '%-16s %-9s %6s %12s %16s\n' path mechanism size Gbit/s "copied anyway"
for path in "${PATHS[@]}"; do
  extra=()
  [[ "$path" == veth* ]] && extra=(--netns --mtu "${path##* }")
  for size in "${SIZES[@]}"; do
    for mech in "${MECHANISMS[@]}"; do
      read -r gbps copied < <(measure "$path" "$mech" "$size" "${extra[@]+"${extra[@]}"}")
      printf '%-16s %-9s %6s %12s %16s\n' "$path" "$mech" "$size" "$gbps" "$copied"
    done
  done
done
log "TCP stream, 1 flow, pinned $SENDER_CPU,$RECEIVER_CPU, $DURATION per run after $WARMUP warm-up, no counters"

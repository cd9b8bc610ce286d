#!/usr/bin/env bash
# bench/hostile/trickle_go.sh — a token holder trickling instead of `go` (issue 37, item 3).
#
# One `bytepath server --max-bytes 1M --max-duration 1s` on 127.0.0.1. examples/hostile_trickle
# proves the token, asks for a counted 1 MiB tcp stream (64 KiB messages), joins its flow and,
# instead of `go`, trickles a record one byte every 100 ms while reading whatever the flow
# brings. Then a legitimate driver runs a counted stream (512 KiB, no warm-up: under
# --max-bytes the warm-up counts). Targets: the hostile session ends within its cap plus 1 s
# (2 s from its request) having been sent no byte; the driver succeeds within 5 s.
# Prints one markdown table row. Environment: BIN=target/release/bytepath (else the debug one).
set -euo pipefail
source "$(dirname "$0")/kind.sh"
TRICKLE=${TRICKLE:-$(dirname "$BIN")/examples/hostile_trickle}
if [ ! -x "$TRICKLE" ]; then
  case "$BIN" in */release/*) cargo build --release --quiet --example hostile_trickle ;;
                 *) cargo build --quiet --example hostile_trickle ;; esac
fi
start_server --max-bytes 1M --max-duration 1s
# "received N bytes, flow ended after N ms, session ended after N ms"
hostile=$(timeout 60 "$TRICKLE" "127.0.0.1:$port" "$dir/token" go 1000)
received=$(echo "$hostile" | awk '{print $2}')
session_ms=$(echo "$hostile" | awk '{print $(NF-1)}')
rc=0
t0=$(date +%s%N)
timeout 60 "$BIN" run --json --remote "127.0.0.1:$port" --token-file "$dir/token" -m send \
  -p stream -s 64K --bytes 512K -d 500ms --warmup 0s --counters none \
  > "$dir/run.json" 2> "$dir/run.err" || rc=$?
t1=$(date +%s%N)
driver="$([ $rc = 0 ] && echo ok || echo "failed($rc)") in $(( (t1 - t0) / 1000000 )) ms"
echo "| trickle_go | asked a counted 1 MiB stream under --max-bytes 1M --max-duration 1s, then trickled 1 B/100 ms instead of go; was sent $received bytes | legitimate driver: $driver | capped run stopped after $session_ms ms | — | — |"

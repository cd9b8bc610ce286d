#!/usr/bin/env bash
# bench/handshake.sh — what the secure control channel adds to a remote run's set-up.
#
# Two servers on loopback, one with a token (Noise handshake, encrypted control frames) and
# one --insecure, each driven by the same short `run --remote` (rr, 4K, --duration 100ms,
# --warmup 0, --counters none) ROUNDS times, alternating which goes first in each round, so
# both see the same load. Printed: each round's wall times, the median of the paired
# differences (secure - insecure) in ms, and the median rr p50 of each (the measured figures,
# which the channel must leave unchanged). Target (issue 26): at most 5 ms added.
# Environment: ROUNDS=10 BIN=target/release/bytepath
set -euo pipefail
ROUNDS=${ROUNDS:-10}
BIN=${BIN:-target/release/bytepath}
[ -x "$BIN" ] || cargo build --release --quiet
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT
(umask 077; head -c 32 /dev/urandom | base64 > "$dir/token")
start() { # $@: server flags; prints the port
  "$BIN" server --port 0 "$@" > "$dir/line.$$" 2>/dev/null &
  for _ in $(seq 100); do [ -s "$dir/line.$$" ] && break; sleep 0.05; done
  awk '{print $5}' "$dir/line.$$" | sed 's/.*://'
  rm -f "$dir/line.$$"
}
secure=$(start --token-file "$dir/token")
insecure=$(start --insecure)
one() { # $1 port, rest: flags; prints "wall_ms p50_ns"
  local port=$1; shift
  local t0 t1
  t0=$(date +%s%N)
  "$BIN" run --json --remote "127.0.0.1:$port" "$@" -m send -p rr -s 4K \
    --duration 100ms --warmup 0 --counters none > "$dir/out.json" 2>/dev/null
  t1=$(date +%s%N)
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r["sides"][0]["latency_ns"]["p50"])' \
    "$dir/out.json" $(( (t1 - t0) / 1000000 ))
}
: > "$dir/pairs"
for i in $(seq "$ROUNDS"); do
  if (( i % 2 )); then
    s=$(one "$secure" --token-file "$dir/token"); n=$(one "$insecure")
  else
    n=$(one "$insecure"); s=$(one "$secure" --token-file "$dir/token")
  fi
  echo "round $i: secure ${s% *} ms (p50 ${s#* } ns), insecure ${n% *} ms (p50 ${n#* } ns)"
  echo "$s $n" >> "$dir/pairs"
done
python3 - "$dir/pairs" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
d = [s - n for s, _, n, _ in rows]
print(f"median added set-up (secure - insecure): {statistics.median(d):.1f} ms over {len(d)} pairs")
print(f"median rr p50: secure {statistics.median(r[1] for r in rows):.0f} ns, insecure {statistics.median(r[3] for r in rows):.0f} ns")
PY

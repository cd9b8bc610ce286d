#!/usr/bin/env bash
# bench/handshake.sh — what the secure control channel adds to a remote run's set-up.
#
# Four servers on loopback: one with a token (Noise NNpsk0, encrypted control frames), one
# with identities (Noise IK: --identity, --authorized-drivers), one with both (IKpsk1), and
# one --insecure, each driven by the same short `run --remote` (rr, 4K, --duration 100ms,
# --warmup 0, --counters none) ROUNDS times, in an order that rotates each round, so all see
# the same load. Printed: each round's wall times, the median of the paired differences
# (token - insecure, identity - token, both - token) in ms, and the median rr p50 of each
# (the measured figures, which the channel must leave unchanged). Targets: the token adds at
# most 5 ms (issue 26); identities add at most 5 ms over the token (issue 37).
# Environment: ROUNDS=10 BIN=target/release/bytepath
set -euo pipefail
ROUNDS=${ROUNDS:-10}
BIN=${BIN:-target/release/bytepath}
[ -x "$BIN" ] || cargo build --release --quiet
dir=$(mktemp -d)
# The servers start inside $(start …), a subshell: they are no jobs of this shell, so their
# pids are kept in a file for the exit (else they outlive the bench, holding its descriptors).
trap 'kill $(cat "$dir/pids" 2>/dev/null) $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT
(umask 077; head -c 32 /dev/urandom | base64 > "$dir/token")
"$BIN" keygen --identity "$dir/server" --name server > /dev/null
"$BIN" keygen --identity "$dir/driver" --name driver > /dev/null
start() { # $@: server flags; prints the port
  "$BIN" server --port 0 "$@" > "$dir/line.$$" 2>/dev/null &
  echo $! >> "$dir/pids"
  for _ in $(seq 100); do [ -s "$dir/line.$$" ] && break; sleep 0.05; done
  awk '{print $5}' "$dir/line.$$" | sed 's/.*://'
  rm -f "$dir/line.$$"
}
keys=(--identity "$dir/server" --authorized-drivers "$dir/driver.pub")
declare -A port flags
port[token]=$(start --token-file "$dir/token")
port[identity]=$(start "${keys[@]}")
port[both]=$(start "${keys[@]}" --token-file "$dir/token")
port[insecure]=$(start --insecure)
flags[token]="--token-file $dir/token"
flags[identity]="--identity $dir/driver --trusted-servers $dir/server.pub"
flags[both]="${flags[identity]} ${flags[token]}"
flags[insecure]=""
one() { # $1 kind; prints "wall_ms p50_ns"
  local t0 t1
  t0=$(date +%s%N)
  # shellcheck disable=SC2086 # the flags are words
  "$BIN" run --json --remote "127.0.0.1:${port[$1]}" ${flags[$1]} -m send -p rr -s 4K \
    --duration 100ms --warmup 0 --counters none > "$dir/out.json" 2>/dev/null
  t1=$(date +%s%N)
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r["sides"][0]["latency_ns"]["p50"])' \
    "$dir/out.json" $(( (t1 - t0) / 1000000 ))
}
kinds=(token identity both insecure)
: > "$dir/rows"
for i in $(seq "$ROUNDS"); do
  declare -A got=()
  for j in 0 1 2 3; do
    kind=${kinds[$(( (i + j) % 4 ))]}
    got[$kind]=$(one "$kind")
  done
  echo "round $i: token ${got[token]% *} ms, identity ${got[identity]% *} ms, both ${got[both]% *} ms, insecure ${got[insecure]% *} ms (p50 ns: ${got[token]#* }, ${got[identity]#* }, ${got[both]#* }, ${got[insecure]#* })"
  echo "${got[token]} ${got[identity]} ${got[both]} ${got[insecure]}" >> "$dir/rows"
done
python3 - "$dir/rows" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
wall = lambda k: [r[2 * k] for r in rows]
token, identity, both, insecure = (wall(k) for k in range(4))
med = lambda a, b: statistics.median(x - y for x, y in zip(a, b))
print(f"median added set-up (token - insecure): {med(token, insecure):.1f} ms over {len(rows)} rounds")
print(f"median added set-up (identity - token): {med(identity, token):.1f} ms; (identity and token - token): {med(both, token):.1f} ms; target at most 5 ms")
p50 = lambda k: statistics.median(r[2 * k + 1] for r in rows)
print(f"median rr p50: token {p50(0):.0f} ns, identity {p50(1):.0f} ns, both {p50(2):.0f} ns, insecure {p50(3):.0f} ns")
PY

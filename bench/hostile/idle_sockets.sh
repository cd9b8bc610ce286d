#!/usr/bin/env bash
# bench/hostile/idle_sockets.sh — no lockout without a token (issue 37, item 1).
#
# A `bytepath server --bind ::` (dual stack) with a token. Two strangers, from 127.0.0.1 and
# 127.0.0.2, each open N idle sockets (one every 5 ms, all kept open on their side: the server
# may hold one pending connection per source and evicts the older), while a driver from ::1
# runs `run --remote [::1]:PORT` (rr, 4K, 300 ms). Prints one markdown row: whether the driver
# succeeded and in how many ms (target: within 5 s), and the server's threads added once the
# strangers' sockets are all open (target: none beyond their two pending connections).
# Needs python3 (std cannot bind a source address before connecting). Environment: N=200
# BIN=target/release/bytepath (or target/debug/bytepath when only that is built).
set -euo pipefail
N=${N:-200}
command -v python3 > /dev/null || { echo "python3 is needed to bind 127.0.0.2" >&2; exit 1; }
source "$(dirname "$0")/kind.sh"
start_server --bind :: --timeout 60s
threads() { awk '/^Threads/{print $2}' "/proc/$server/status"; }
before=$(threads)
# The strangers: N idle sockets each, kept open until told to end (the file "done").
timeout 60 python3 - "$port" "$N" "$dir" <<'PY' &
import os, socket, sys, threading, time
port, n, d = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
held = []
def stranger(source):
    for _ in range(n):
        s = socket.socket(); s.bind((source, 0)); s.connect(("127.0.0.1", port))
        held.append(s); time.sleep(0.005)
ts = [threading.Thread(target=stranger, args=(a,)) for a in ("127.0.0.1", "127.0.0.2")]
[t.start() for t in ts]; [t.join() for t in ts]
open(os.path.join(d, "opened"), "w").close()
while not os.path.exists(os.path.join(d, "done")): time.sleep(0.05)
PY
sleep 0.3
t0=$(date +%s%N)
rc=0
timeout 60 "$BIN" run --json --remote "[::1]:$port" --token-file "$dir/token" -m send -p rr -s 4K \
  -d 300ms --warmup 100ms --counters none > "$dir/run.json" 2> "$dir/run.err" || rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
for _ in $(seq 600); do [ -e "$dir/opened" ] && break; sleep 0.05; done
sleep 0.5 # the evicted sessions' threads end
added=$(( $(threads) - before ))
touch "$dir/done"
driver=$([ $rc = 0 ] && echo ok || echo "failed ($rc)")
echo "| idle sockets | $N idle sockets each from 127.0.0.1 and 127.0.0.2, each kept open | $driver in $ms ms | — | — | — / $added threads added while $((2 * N)) sockets are held (one pending connection per source is kept) |"

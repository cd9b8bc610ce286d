#!/usr/bin/env bash
# bench/hostile/health_silent.sh — health that cannot be starved (issue 37, item 5).
#
# A `bytepath server --health-port` with a token. For S seconds a stranger at 127.0.0.1 opens
# two silent connections a second to the health port (each kept open until the server's 1 s
# deadline ends it) while a prober asks GET /healthz every 250 ms with the kubelet's default
# 1 s timeout, alternately from 127.0.0.1 and 127.0.0.2, and a driver runs `run --remote`
# on the control port meanwhile (rr, 4K, 300 ms). Prints one markdown row: the driver's outcome and time, and
# the probes answered 200 (target: all). Needs python3 (to bind 127.0.0.2). Environment: S=5
# BIN=target/release/bytepath (or target/debug/bytepath when only that is built).
set -euo pipefail
S=${S:-5}
command -v python3 > /dev/null || { echo "python3 is needed to bind 127.0.0.2" >&2; exit 1; }
source "$(dirname "$0")/kind.sh"
health=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_server --health-port "$health"
timeout $((S + 30)) python3 - "$health" "$S" > "$dir/probes" <<'PY' &
import socket, sys, threading, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
def silent():
    held = []
    end = time.time() + seconds
    while time.time() < end:
        held.append(socket.create_connection(("127.0.0.1", port))); time.sleep(0.5)
threading.Thread(target=silent, daemon=True).start()
time.sleep(0.2)
asked = answered = 0
end = time.time() + seconds - 0.2
while time.time() < end:
    asked += 1
    try:
        s = socket.socket(); s.settimeout(1.0)
        s.bind(("127.0.0.1" if asked % 2 else "127.0.0.2", 0)); s.connect(("127.0.0.1", port))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: pod\r\nUser-Agent: kube-probe/1.30\r\n\r\n")
        answer = b""
        while chunk := s.recv(4096): answer += chunk
        answered += answer.startswith(b"HTTP/1.1 200 OK\r\n")
    except OSError:
        pass
    time.sleep(0.25)
print(answered, asked)
PY
probes=$!
sleep 1
t0=$(date +%s%N)
rc=0
# The control port is not what this kind attacks: the driver shows the server goes on serving.
timeout 60 "$BIN" run --json --remote "127.0.0.1:$port" --token-file "$dir/token" -m send -p rr \
  -s 4K -d 300ms --warmup 100ms --counters none > "$dir/run.json" 2> "$dir/run.err" || rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
wait $probes
read -r answered asked < "$dir/probes"
driver=$([ $rc = 0 ] && echo ok || echo "failed ($rc)")
echo "| health, silent connections | 2 silent connections a second to the health port from 127.0.0.1 for $S s | $driver in $ms ms | — | $answered/$asked | — |"

#!/usr/bin/env bash
# bench/hostile/servers_stranger.sh — a stranger at a servers point's model (issue 37, item 4).
#
# One `bytepath server` on 127.0.0.1; a legitimate driver runs `bytepath servers --remote`
# (threaded model, 2 clients, 3 s) from 127.0.0.1. While its point runs, a stranger from
# 127.0.0.2 connects to the point's model (found as the server's forked child and its
# listening socket), sends one 64-byte request and waits 3 s for an echo; the model's threads
# are read from /proc/PID/status before (once the driver's clients are in) and after. The model
# shuts its listener once the driver's connections are in, so the stranger, coming then, is
# refused by the kernel; one that came earlier is closed right after accept.
# Targets: the stranger gets no echo and adds no thread; the driver's point completes within
# its time plus 5 s. Needs python3. Prints one markdown table row.
# Environment: BIN=target/release/bytepath (else the debug one).
set -euo pipefail
command -v python3 > /dev/null || { echo "| servers_stranger | skipped: python3 is needed to connect from 127.0.0.2 | — | — | — | — |"; exit 0; }
source "$(dirname "$0")/kind.sh"
start_server
(
  rc=0
  t0=$(date +%s%N)
  # No wait for a quiet machine: this checks the door, not the figures.
  BYTEPATH_SETTLE=off BYTEPATH_QUIET_THRESHOLD=100% timeout 60 "$BIN" servers --json --remote "127.0.0.1:$port" --token-file "$dir/token" \
    --models threaded --clients 2 --duration 3s --warmup 200ms --visits 1 --out "$dir/out" \
    > "$dir/servers.json" 2> "$dir/servers.err" || rc=$?
  t1=$(date +%s%N)
  echo "$rc $(( (t1 - t0) / 1000000 ))" > "$dir/driver"
) &
driver_job=$!
# "THREADS_ADDED ECHOED" or "- -" when no model was found in time.
stranger=$(timeout 30 python3 - "$server" <<'PY'
import os, socket, sys, time
server = sys.argv[1]

def parent(pid):
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[1]

def forked_model():
    # The model is the server's own child.
    return next((p for p in os.listdir("/proc") if p.isdigit() and parent(p) == server), None)

def listening_port(pid):
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    rows = [line.split() for line in open(f"/proc/{pid}/net/tcp").readlines()[1:]]
    mine = [f for f in rows if f[9] in inodes]
    # Listening, or (once the listener is shut at the driver's count) the port its accepted
    # connections hold.
    for state in ("0A", "01"):
        for f in mine:
            if f[3] == state:
                return int(f[1].split(":")[1], 16)
    return None

def threads(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("Threads:"):
            return int(line.split()[1])

deadline = time.time() + 25
model = port = None
while time.time() < deadline and port is None:
    model = forked_model()
    if model is not None:
        try:
            port = listening_port(model)
        except OSError:
            port = None
    time.sleep(0.002)
if port is None:
    print("- -")
    sys.exit(0)
# Once the driver's clients are in, the model's thread count holds still.
before, still = threads(model), time.time()
while time.time() - still < 0.5:
    time.sleep(0.05)
    now = threads(model)
    if now != before:
        before, still = now, time.time()
s = socket.socket()
s.bind(("127.0.0.2", 0))
s.settimeout(3)
try:
    s.connect(("127.0.0.1", port))
    s.sendall(b"x" * 64)
    echoed = len(s.recv(65536))
except ConnectionRefusedError:
    # The model stopped listening once the driver's connections were in.
    echoed = "0 (refused: the listener was shut at the driver's count)"
except (ConnectionResetError, BrokenPipeError):
    echoed = "0 (closed after accept)"
except socket.timeout:
    echoed = "no answer in 3 s"
time.sleep(0.2)
print(threads(model) - before, echoed)
PY
)
wait "$driver_job" || true
read -r rc ms < "$dir/driver"
driver="$([ "$rc" = 0 ] && echo ok || echo "failed($rc)") in $ms ms"
read -r added echoed <<< "$stranger"
echo "| servers_stranger | connected from 127.0.0.2 to a servers point's model (threaded, 2 clients) and sent one 64-byte request | legitimate driver: $driver | — | — | stranger: $echoed echo bytes / $added threads added |"

#!/usr/bin/env bash
# bench/hostile.sh — a server under hostile connections while a legitimate driver runs.
#
# One `bytepath server --bind :: --token-file` (dual stack). From 127.0.0.1 (seen by the server
# as ::ffff:127.0.0.1), N connections of each kind, in turn, each kind while a driver from ::1
# runs `run --remote [::1]:PORT` (rr, 4K, 1 s): idle sockets; a hello trickled one byte a
# second; garbage (random bytes); wrong tokens (N/20 real handshakes with a wrong token: each
# is a process); a replayed handshake (the client's first two frames of a recorded legitimate
# session, replayed N times, then a forged record). Printed per kind: how many the server
# answered or closed, whether the driver's run succeeded and how long it took to complete
# (target: starts within 5 s); and the server's descriptors, threads and RSS before, and after
# the last kind once its connections are closed (target: within 10 % of the start).
# Not covered here: a spoofed udp join (tests: remote::udp unit test) and a peer run toward a
# closed port. Environment: N=1000 BIN=target/release/bytepath
set -euo pipefail
N=${N:-1000}
BIN=${BIN:-target/release/bytepath}
[ -x "$BIN" ] || cargo build --release --quiet
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT
head -c 32 /dev/urandom | base64 > "$dir/token"
head -c 32 /dev/urandom | base64 > "$dir/wrong"
"$BIN" server --bind :: --port 0 --token-file "$dir/token" > "$dir/line" 2> "$dir/server.log" &
server=$!
for _ in $(seq 100); do [ -s "$dir/line" ] && break; sleep 0.05; done
port=$(awk '{print $5}' "$dir/line" | sed 's/.*://')
usage() { # fds threads rss_kib
  echo "$(ls /proc/$server/fd | wc -l) $(awk '/^Threads/{print $2}' /proc/$server/status) $(awk '/^VmRSS/{print $2}' /proc/$server/status)"
}
driver() { # prints "ok|failed SECONDS"
  local t0 t1 rc=0
  t0=$(date +%s%N)
  "$BIN" run --json --remote "[::1]:$port" --token-file "$dir/token" -m send -p rr -s 4K \
    --duration 1s --warmup 100ms --counters none > "$dir/run.json" 2> "$dir/run.err" || rc=$?
  t1=$(date +%s%N)
  echo "$([ $rc = 0 ] && echo ok || echo "failed($rc)") $(( (t1 - t0) / 1000000 )) ms"
}
driver > /dev/null # warm: the first run's allocations are not the hostile ones'
before=$(usage)
hostile() { # $1 kind; prints "answered/closed of N"
  python3 - "$1" "$port" "$N" "$dir" <<'PY'
import os, socket, sys, time, threading
kind, port, n, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
closed = 0
lock = threading.Lock()
def one(i):
    global closed
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=15)
        if kind == "garbage":
            s.sendall(os.urandom(64))
        elif kind == "trickle":
            for b in b'\x00\x00\x00\x40{"type":"client_hello"':
                s.send(bytes([b])); time.sleep(1)
        elif kind == "replay":
            s.sendall(open(os.path.join(d, "recorded"), "rb").read())
            s.sendall(b"\x00\x40" + os.urandom(64))
        s.recv(65536)  # the server's answer or its close
        with lock: closed += 1
    except (ConnectionResetError, BrokenPipeError):
        with lock: closed += 1  # closed by the server while this one still sent
    except Exception:
        pass  # not connected, or still open after 15 s
threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
[t.start() for t in threads]
[t.join() for t in threads]
print(f"{closed} of {n} answered or closed by the server")
PY
}
# A recorded legitimate session's first two frames (hello, handshake message), for the replay.
python3 - "$port" "$dir" "$BIN" <<'PY' &
import socket, subprocess, sys, struct
port, d, binary = int(sys.argv[1]), sys.argv[2], sys.argv[3]
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
p = subprocess.Popen([binary, "run", "--remote", f"127.0.0.1:{l.getsockname()[1]}", "--token-file", f"{d}/token", "-m", "send", "-d", "100ms"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
c, _ = l.accept(); u = socket.create_connection(("127.0.0.1", port)); rec = b""
for _ in range(2):
    h = c.recv(4, socket.MSG_WAITALL); b = c.recv(struct.unpack(">I", h)[0], socket.MSG_WAITALL)
    rec += h + b; u.sendall(h + b)
    if len(rec) == len(h + b): c.sendall(u.recv(65536))  # the server's hello, to the client
open(f"{d}/recorded", "wb").write(rec); p.kill()
PY
wait $!
for kind in idle trickle garbage replay; do
  ( sleep 1; driver > "$dir/driver" ) &
  d=$!
  outcome=$(hostile "$kind")
  wait $d
  echo "$kind x$N: driver $(cat "$dir/driver"); $outcome"
done
( sleep 1; driver > "$dir/driver" ) &
d=$!
for _ in $(seq $(( N / 20 ))); do
  "$BIN" run --remote "127.0.0.1:$port" --token-file "$dir/wrong" -m send -d 100ms > /dev/null 2>&1 || echo refused
done > "$dir/wrong.out"
wait $d
echo "wrong token x$((N / 20)): driver $(cat "$dir/driver"); $(wc -l < "$dir/wrong.out") refused"
sleep 6 # every hostile connection past its handshake deadline
after=$(usage)
echo "server fds threads rss_kib: before $before, after $after"
echo "server log: $(grep -c 'turned away' "$dir/server.log" || true) turned-away lines, $(wc -l < "$dir/server.log") lines in all"

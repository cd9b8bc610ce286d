#!/usr/bin/env bash
# bench/hostile/replay_trickle.sh — a recorded first handshake message replayed, then a trickle.
#
# One `bytepath server` with a token on 127.0.0.1. A relay records a legitimate client's first
# two frames (its hello and its first handshake message). Then K connections from 127.0.0.2
# each replay them and trickle a record one byte a second (what held a slot for days before
# protocol version 4: the replay completed the handshake, and the encrypted read had no
# deadline). Meanwhile a legitimate driver from 127.0.0.1 runs `run --remote` (rr, 4K, 1 s).
# Targets: every replay is refused as a wrong token (or turned away busy, once 127.0.0.2 has
# presented 5 wrong tokens, or evicted by the next one from 127.0.0.2) and closed within the 5 s
# deadline; the driver succeeds within 5 s of its start. Prints one markdown table row for
# bench/hostile.sh.
# Environment: K=8 BIN=target/release/bytepath (else target/debug/bytepath)
set -euo pipefail
K=${K:-8}
source "$(dirname "$0")/kind.sh"
start_server --timeout 60s
# The recording: a relay that passes a legitimate run's first connection (its check) through.
timeout 30 python3 - "$port" "$dir" "$BIN" <<'PY'
import socket, subprocess, sys, struct, threading
port, d, binary = int(sys.argv[1]), sys.argv[2], sys.argv[3]
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(4)
p = subprocess.Popen([binary, "run", "--remote", f"127.0.0.1:{l.getsockname()[1]}", "--token-file",
                      f"{d}/token", "-m", "send", "-d", "100ms"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
c, _ = l.accept(); u = socket.create_connection(("127.0.0.1", port))
def back():
    while (b := u.recv(65536)):
        c.sendall(b)
threading.Thread(target=back, daemon=True).start()
rec = b""
for _ in range(2):
    h = c.recv(4, socket.MSG_WAITALL); b = c.recv(struct.unpack(">I", h)[0], socket.MSG_WAITALL)
    rec += h + b; u.sendall(h + b)
open(f"{d}/recorded", "wb").write(rec)
p.kill()
PY
driver() { # prints "ok|failed(rc) in N ms"
  local t0 t1 rc=0
  t0=$(date +%s%N)
  timeout 60 "$BIN" run --json --remote "127.0.0.1:$port" --token-file "$dir/token" -m send -p rr \
    -s 4K --duration 1s --warmup 100ms --counters none > "$dir/run.json" 2> "$dir/run.err" || rc=$?
  t1=$(date +%s%N)
  echo "$([ $rc = 0 ] && echo ok || echo "failed($rc)") in $(( (t1 - t0) / 1000000 )) ms"
}
( sleep 1; driver > "$dir/driver" ) &
drv=$!
hostile=$(timeout 60 python3 - "$port" "$dir" "$K" <<'PY'
import json, socket, struct, sys, threading, time
port, d, k = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
recorded = open(f"{d}/recorded", "rb").read()
lock = threading.Lock()
refused, busy, evicted, closed_ms = [0], [0], [0], []
def frames(buf):
    out = []
    while len(buf) >= 4 and len(buf) >= 4 + struct.unpack(">I", buf[:4])[0]:
        n = struct.unpack(">I", buf[:4])[0]; out.append(buf[4:4 + n]); buf = buf[4 + n:]
    return out
def one():
    t0 = time.monotonic()
    s = socket.socket(); s.bind(("127.0.0.2", 0)); s.settimeout(30)
    s.connect(("127.0.0.1", port)); s.sendall(recorded)
    got = b""
    trickle = iter(b"\x00\x40" + b"\x5a" * 64)
    s.settimeout(1)
    while time.monotonic() - t0 < 30:
        try:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        except socket.timeout:
            pass
        except OSError:
            break
        try:
            s.send(bytes([next(trickle)]))
        except (OSError, StopIteration):
            pass
    else:
        return  # still open after 30 s
    with lock:
        closed_ms.append(int((time.monotonic() - t0) * 1000))
        answers = [json.loads(b) if b[:1] == b"{" else {} for b in frames(got)]
        if any(m.get("type") == "error" and m.get("code") == "auth" for m in answers):
            refused[0] += 1
        elif any(m.get("type") == "busy" for m in answers):
            busy[0] += 1
        else:
            evicted[0] += 1
ts = [threading.Thread(target=one) for _ in range(k)]
[t.start() for t in ts]; [t.join() for t in ts]
worst = max(closed_ms) if closed_ms else "-"
print(f"{refused[0]}/{k} refused as a wrong token, {busy[0]}/{k} turned away busy (the back-off), "
      f"{evicted[0]}/{k} closed unanswered (evicted by a newer connection from 127.0.0.2, one place a source), "
      f"{len(closed_ms)}/{k} closed, the last after {worst} ms")
PY
)
wait $drv
echo "| replay_trickle | $K connections from 127.0.0.2 replayed a recorded first handshake message, then trickled a record 1 byte/s: $hostile | $(cat "$dir/driver") | — | — | — |"

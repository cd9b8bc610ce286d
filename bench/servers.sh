#!/usr/bin/env bash
# bench/servers.sh — the two questions issue 6 asks of `bytepath servers`, in one run.
#
# (a) Scale target: can the epoll and io_uring servers hold 10,000 clients and serve every one?
#     `bytepath servers --models epoll,uring --clients 10000 --size 64` (closed loop: each client
#     sends its next 64 B request when the whole echo of the last has arrived), DURATION
#     measured after a WARMUP. Printed: req/s, p50/p99 latency, server CPU per request, and
#     whether all 10,000 connections were accepted by the server (its accept count), connected
#     by the load generator, and served (each connection completed at least one request, from
#     the per-connection spans of the hidden --record-connections flag), with no mismatched
#     echo, connection error or recorded error, at the full 10,000 (not capped by
#     RLIMIT_NOFILE). The target is MET only when all of that holds.
# (b) The seeds' comparison: iterative, threaded and select at 5 and 15 clients. In a closed
#     loop with persistent connections an iterative server serves the first client it accepts
#     for ever and the others never get an answer, so the comparison would measure one client.
#     Each client therefore closes its connection after REQUESTS_PER_CONNECTION requests
#     (--requests-per-connection), the iterative server accepts the next one, and the point ends
#     when every client has finished (or at DURATION). No warm-up here: requests made in a
#     warm-up would count against each connection's quota. "served" is how many clients
#     completed all their requests.
#
# Why: (a) is the C10K question the event-driven models exist for; (b) is the seeds' table, kept
# so the old models are compared on the same load generator and the same accounting (the server
# in its own process, its CPU alone per request). bytepath places the server and the clients
# itself (`--pin`, default split: server on the upper half of the allowed CPUs, clients on the
# lower half).
#
# Exit status: 0 when every run ended and its results could be read (a missed target is
# reported, not an error: a benchmark informs); 1 if a run did not end in time or left no
# results; 2 if a required command is missing.
#
# Environment:
#   DURATION=5s                   measured time per point (bytepath --duration syntax)
#   WARMUP=200ms                  load before each scale point, excluded from its figures
#   SCALE_CLIENTS=10000           clients held for (a)
#   SEED_CLIENTS=5,15             client counts for (b)
#   REQUESTS_PER_CONNECTION=2000  requests each client makes before closing, for (b)
#   SIZE=64                       request size in bytes, both parts
#   CLIENT_THREADS=               load-generator threads; empty: bytepath's default, one per CPU
#                                 of the load side (at most one per client)
#   PORT_BASE=15301               unused here (bytepath binds its own ports); lib.sh wants it
#
# Only 127.0.0.1 is used. Every run is bounded by `timeout`.

set -euo pipefail

DURATION="${DURATION:-5s}"
WARMUP="${WARMUP:-200ms}"
SCALE_CLIENTS="${SCALE_CLIENTS:-10000}"
SEED_CLIENTS="${SEED_CLIENTS:-5,15}"
REQUESTS_PER_CONNECTION="${REQUESTS_PER_CONNECTION:-2000}"
SIZE="${SIZE:-64}"
CLIENT_THREADS="${CLIENT_THREADS:-}"
PORT_BASE="${PORT_BASE:-15301}"

BENCH=servers
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ "$DURATION" =~ ^[0-9]+(ms|s)$ ]] || die "DURATION must be like 5s or 500ms, got '$DURATION'"
[[ "$WARMUP" =~ ^[0-9]+(ms|s)$ ]] || die "WARMUP must be like 200ms or 0s, got '$WARMUP'"
[[ "$SCALE_CLIENTS" =~ ^[1-9][0-9]*$ ]] || die "SCALE_CLIENTS must be a positive integer, got '$SCALE_CLIENTS'"
[[ "$SEED_CLIENTS" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "SEED_CLIENTS must be a list such as 5,15, got '$SEED_CLIENTS'"
[[ "$REQUESTS_PER_CONNECTION" =~ ^[1-9][0-9]*$ ]] || die "REQUESTS_PER_CONNECTION must be a positive integer, got '$REQUESTS_PER_CONNECTION'"
[[ "$SIZE" =~ ^[1-9][0-9]*$ ]] || die "SIZE must be a positive integer (bytes), got '$SIZE'"
[[ -z "$CLIENT_THREADS" || "$CLIENT_THREADS" =~ ^[1-9][0-9]*$ ]] || die "CLIENT_THREADS must be empty or a positive integer, got '$CLIENT_THREADS'"
# bytepath's default unless a count is given.
THREAD_ARGS=()
[[ -n "$CLIENT_THREADS" ]] && THREAD_ARGS=(--client-threads "$CLIENT_THREADS")
require_cmds python3 timeout cargo
build_bytepath

seconds() { # 5s | 500ms -> whole seconds, rounded up
  python3 -c "import sys; t=sys.argv[1]; v=float(t[:-2])/1000 if t.endswith('ms') else float(t[:-1]); import math; print(math.ceil(v))" "$1"
}
# A point may take its warm-up, its duration and its connection setup (bytepath allows 10 s
# plus 1 ms per client), plus forking the server and closing the connections.
POINT_LIMIT=$(($(seconds "$WARMUP") + $(seconds "$DURATION") + 10 + SCALE_CLIENTS / 1000 + 30))

ROWS_FILE="$WORK/rows"
: >"$ROWS_FILE"

# Runs one `bytepath servers` study into $WORK/NAME and appends its table rows. A non-zero exit
# from bytepath (a failed point) is reported in the rows; no results at all is fatal.
study() { # name part points args...
  local name="$1" part="$2" points="$3" out rc=0
  shift 3
  out="$WORK/$name"
  log "$part: bytepath servers $*"
  timeout "$((POINT_LIMIT * points))" "$BYTEPATH" servers --out "$out" --record-connections \
    --size "$SIZE" --duration "$DURATION" "${THREAD_ARGS[@]}" "$@" \
    >"$out.log" 2>&1 || rc=$?
  if ((rc == 124)); then
    cat "$out.log" >&2
    die "$part: bytepath servers did not end within $((POINT_LIMIT * points)) s"
  fi
  [[ -s "$out/results.jsonl" ]] || { cat "$out.log" >&2; die "$part: no results (exit $rc)"; }
  ((rc == 0)) || log "$part: bytepath servers exited $rc (a point failed; see the table)"
  python3 - "$out/results.jsonl" "$part" "$REQUESTS_PER_CONNECTION" >>"$ROWS_FILE" <<'EOF' ||
import json, sys
path, part, per_connection = sys.argv[1], sys.argv[2], int(sys.argv[3])
scale = part.startswith("a")

def fmt(v, scale=1.0, digits=0):
    return "n/a" if v is None else f"{v / scale:.{digits}f}"

for line in open(path):
    if not line.strip():
        continue
    r = json.loads(line)
    c, m = r["config"], r.get("metrics") or {}
    s, lat = m.get("server") or {}, m.get("latency_ns") or {}
    status = r["status"]
    if status in ("refused", "skipped"):
        verdict = f"{status}: {r.get('reason')}"
    else:
        spans = r.get("connections") or []
        served = sum(1 for x in spans if x["completed"] > 0)
        finished = sum(1 for x in spans if x["completed"] >= per_connection)
        clean = (status == "completed" and not r.get("errors")
                 and m.get("mismatched_requests") == 0 and m.get("connection_errors") == 0
                 and m.get("failed_connects") == 0)
        if scale:
            whole = (c["clients"] == c["clients_requested"]
                     and s.get("accepted_connections") == c["clients"]
                     and m.get("connected") == c["clients"] and served == c["clients"])
            verdict = "MET" if whole and clean else "MISSED"
            verdict += (f": accepted {s.get('accepted_connections')}, connected {m.get('connected')},"
                        f" served {served} of {c['clients_requested']}")
        else:
            verdict = f"served {finished} of {c['clients']} clients x {per_connection} requests"
        if not clean:
            verdict += (f"; status {status}, mismatched {m.get('mismatched_requests')},"
                        f" connection errors {m.get('connection_errors')},"
                        f" failed connects {m.get('failed_connects')}, errors {r.get('errors')}")
        if (m.get("client") or {}).get("load_limited"):
            verdict += "; load-limited (client CPU/thread >= 90 %)"
        if c.get("clients_capped_reason"):
            verdict += f"; {c['clients_capped_reason']}"
    print("|".join([part, c["model"], str(c["clients"]), status,
                    fmt(m.get("requests_per_s")), fmt(lat.get("p50"), 1e3, 1),
                    fmt(lat.get("p99"), 1e3, 1), fmt(s.get("cpu_per_request_ns")),
                    fmt(s.get("context_switches_per_request"), 1, 2), verdict]))
EOF
    die "$part: could not read $out/results.jsonl"
}

study scale "a: scale" 2 --models epoll,uring --clients "$SCALE_CLIENTS" --warmup "$WARMUP"
IFS=, read -r -a seed_counts <<<"$SEED_CLIENTS"
study seeds "b: seeds" $((3 * ${#seed_counts[@]})) --models iterative,threaded,select \
  --clients "$SEED_CLIENTS" --warmup 0s --requests-per-connection "$REQUESTS_PER_CONNECTION"

echo
echo "bytepath servers: ${SIZE} B requests, closed loop, loopback, ${CLIENT_THREADS:-one per load CPU (default)} client threads, DURATION $DURATION"
echo "  a: epoll and uring holding $SCALE_CLIENTS clients after a $WARMUP warm-up; MET = every connection"
echo "     accepted, connected and served, no capping, no error or mismatched echo"
echo "  b: the seeds' models; each client closes after $REQUESTS_PER_CONNECTION requests so an iterative"
echo "     server reaches the next client; no warm-up; the point ends when all clients are done"
echo "  server CPU and context switches: the forked server process alone, per request"
echo
{
  echo "part|model|clients|status|req/s|p50 us|p99 us|server CPU ns/req|cs/req|accepted and served"
  cat "$ROWS_FILE"
} | print_table 0 1 3 9
exit 0

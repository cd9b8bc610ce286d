#!/usr/bin/env bash
# bench/lib.sh — helpers shared by the bench/*.sh scripts (sourced, never run). The sourcing
# script sets BENCH (its name, for messages) and PORT_BASE, and defines `log` and `die` through
# this file. Provides: tool checks and apt installs, building bytepath, a work folder and the
# server processes cleaned up on exit, loopback port helpers, and number formatting.

log() { echo "$BENCH: $*" >&2; }
die() { echo "$BENCH: $*" >&2; exit 1; }
need_cmd() { command -v "$1" >/dev/null 2>&1; }

install_pkgs() {
  need_cmd apt-get || return 1
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    need_cmd sudo || return 1
    sudo=(sudo)
  fi
  log "installing $* with apt-get"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2 ||
    { "${sudo[@]}" apt-get update -qq >&2 &&
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2; }
}

# Exits 2 naming the first of these commands that is missing.
require_cmds() {
  local t
  for t in "$@"; do
    need_cmd "$t" || { echo "$BENCH: required command '$t' not found" >&2; exit 2; }
  done
}

# Builds bytepath (release) from the repository this file lives in; sets BYTEPATH.
build_bytepath() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  log "building bytepath (cargo build --release)"
  (cd "$root" && cargo build --release --quiet >&2) || die "cargo build --release failed"
  BYTEPATH="$root/target/release/bytepath"
  [[ -x "$BYTEPATH" ]] || die "bytepath binary not found at $BYTEPATH"
}

# A work folder and the servers started into SERVER_PIDS, all gone on exit or Ctrl-C.
WORK="$(mktemp -d "${TMPDIR:-/tmp}/bytepath-$BENCH.XXXXXX")"
SERVER_PIDS=()
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
  local pid
  for pid in "${SERVER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${SERVER_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

NEXT_PORT="$PORT_BASE"

port_bound() { # proto(tcp|udp) port -> 0 if a socket listens (tcp) / is bound (udp) on it
  local hex state
  hex="$(printf '%04X' "$2")"
  if [[ "$1" == tcp ]]; then state=0A; else state=07; fi
  awk -v p=":$hex" -v s="$state" 'NR > 1 && $4 == s && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' \
    "/proc/net/$1" "/proc/net/${1}6" 2>/dev/null
}

# shellcheck disable=SC2034  # PORT is read by the sourcing script
next_free_port() { # -> PORT, free for both TCP and UDP
  local tries=0
  while port_bound tcp "$NEXT_PORT" || port_bound udp "$NEXT_PORT"; do
    NEXT_PORT=$((NEXT_PORT + 1))
    tries=$((tries + 1))
    ((tries < 200)) || die "no free port found from $PORT_BASE"
  done
  PORT="$NEXT_PORT"
  NEXT_PORT=$((NEXT_PORT + 1))
}

wait_bound() { # proto port pid log
  local i
  for ((i = 0; i < 100; i++)); do
    port_bound "$1" "$2" && return 0
    kill -0 "$3" 2>/dev/null || { cat "$4" >&2; die "server on $1 port $2 exited before listening"; }
    sleep 0.05
  done
  cat "$4" >&2
  die "server on $1 port $2 not listening after 5 s"
}

stop_server() { # pid
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  local keep=() p
  for p in "${SERVER_PIDS[@]}"; do [[ "$p" != "$1" ]] && keep+=("$p"); done
  SERVER_PIDS=("${keep[@]+"${keep[@]}"}")
}

# Seconds (decimals allowed) -> whole milliseconds.
ms_of() { python3 -c 'import sys; print(round(float(sys.argv[1]) * 1000))' "$1"; }
# A size as bytepath reads it -> bytes.
bytes_of() { # 4K -> 4096 (K/M = KiB/MiB, as bytepath reads them)
  python3 -c '
import sys
s = sys.argv[1].upper().removesuffix("IB").removesuffix("B")
m = {"K": 1 << 10, "M": 1 << 20}.get(s[-1:], 1)
print(int(s[:-1] if m > 1 else s) * m)' "$1"
}

fmt() { python3 -c "import sys; print(format(float(sys.argv[1]), sys.argv[2]))" "$1" "$2"; }
# Prints "|"-separated rows from stdin (the first is the header) as aligned columns with a rule
# under the header; the columns whose 0-based indexes are given are left-aligned, the rest
# right-aligned (numbers).
print_table() { # left_column...
  python3 -c '
import sys
left = {int(a) for a in sys.argv[1:]}
rows = [l.rstrip("\n").split("|") for l in sys.stdin if l.strip()]
w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
for n, r in enumerate(rows):
    print("  ".join(c.ljust(w[i]) if i in left else c.rjust(w[i]) for i, c in enumerate(r)).rstrip())
    if n == 0:
        print("  ".join("-" * x for x in w))
' "$@"
}
ratio() { python3 -c "import sys; print(format(float(sys.argv[1]) / float(sys.argv[2]), '.3f'))" "$1" "$2"; }

# iperf3 TCP stream over loopback -> RESULT received Gbit/s. Uses the sourcing script's DURATION,
# WARMUP and RUN_LIMIT; arguments after the CPUs go to the iperf3 client (e.g. -Z).
iperf3_stream() { # size client_cpu server_cpu [client args...]
  local size="$1" ccpu="$2" scpu="$3" spid
  shift 3
  local slog="$WORK/iperf3-server.log" out="$WORK/iperf3.json"
  next_free_port
  timeout "$RUN_LIMIT" taskset -c "$scpu" iperf3 -s -1 -B 127.0.0.1 -p "$PORT" >"$slog" 2>&1 &
  spid=$!
  SERVER_PIDS+=("$spid")
  wait_bound tcp "$PORT" "$spid" "$slog"
  if ! timeout "$RUN_LIMIT" taskset -c "$ccpu" iperf3 -c 127.0.0.1 -p "$PORT" \
      -l "$size" -t "$DURATION" -O "$WARMUP" -J "$@" >"$out" 2>"$out.err"; then
    cat "$out" "$out.err" "$slog" >&2
    die "iperf3 client ($size) failed"
  fi
  wait "$spid" 2>/dev/null || true # -1: the server exits after its client
  stop_server "$spid"
  RESULT="$(python3 - "$out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
if "error" in d:
    sys.exit(d["error"])
v = d["end"]["sum_received"]["bits_per_second"] / 1e9
if v <= 0:
    sys.exit("no throughput")
print(v)
EOF
)" || { cat "$out" >&2; die "could not parse iperf3 output"; }
}

# sockperf ping-pong over loopback -> RESULT mean and RESULT2 p50 FULL round trip, µs (sockperf
# reports half the round trip; both are doubled here).
# shellcheck disable=SC2034  # RESULT and RESULT2 are read by the sourcing script
sockperf_rtt() { # proto(tcp|udp) client_cpu server_cpu size seconds limit_s
  local proto="$1" ccpu="$2" scpu="$3" size="$4" seconds="$5" limit="$6" spid flag=()
  local slog="$WORK/sockperf-server.log" out="$WORK/sockperf.out" parsed
  [[ "$proto" == tcp ]] && flag=(--tcp)
  next_free_port
  timeout "$((limit + 10))" taskset -c "$scpu" sockperf server "${flag[@]}" -i 127.0.0.1 -p "$PORT" >"$slog" 2>&1 &
  spid=$!
  SERVER_PIDS+=("$spid")
  wait_bound "$proto" "$PORT" "$spid" "$slog"
  if ! timeout "$limit" taskset -c "$ccpu" sockperf ping-pong "${flag[@]}" -i 127.0.0.1 -p "$PORT" \
      -m "$size" -t "$seconds" >"$out" 2>&1; then
    cat "$out" "$slog" >&2
    die "sockperf ping-pong ($proto) failed"
  fi
  stop_server "$spid"
  # Lines (usec, half round trip, ANSI colour codes elsewhere):
  #   sockperf: ====> avg-latency=33.005 (std-dev=15.104)
  #   sockperf: ---> percentile 50.000 =   31.832
  parsed="$(python3 - "$out" <<'EOF'
import re, sys
text = re.sub(r"\x1b\[[0-9;]*m", "", open(sys.argv[1], errors="replace").read())
a = re.search(r"avg-lat(?:ency)?\s*=\s*([0-9.]+)", text)
m = re.search(r"--->\s*percentile\s+50(?:\.0+)?\s*=\s*([0-9.]+)", text)
if not a or not m:
    sys.exit("no 'avg-latency=' or 'percentile 50.000 =' line")
avg, p50 = float(a.group(1)), float(m.group(1))
if avg <= 0 or p50 <= 0:
    sys.exit("zero latency")
print(2.0 * avg, 2.0 * p50)
EOF
)" || { cat "$out" >&2; die "could not parse sockperf output"; }
  read -r RESULT RESULT2 <<<"$parsed"
}

#!/usr/bin/env bash
# bench/file.sh — bytepath file beside iperf3 serving the same file.
#
# What it measures, in one run, for each file size (default 98 MiB and 1 GiB), warm cache:
#   bytepath file --file F --mechanisms readsend,sendfile  (REPS transfers each, mean time)
#   iperf3 -c -F F       (iperf3 serves a file by read+send)    REPS runs, mean time
#   iperf3 -c -F F -Z    (iperf3 serves a file by sendfile)     REPS runs, mean time
# Both tools use the same file, the same write/chunk size (CHUNK, default 64K, iperf3 -l),
# loopback TCP, the same pinning (the sending side on SENDER_CPU, the receiving side on
# RECEIVER_CPU: bytepath --pin SENDER,RECEIVER; iperf3 -A SENDER,RECEIVER from its client, which
# is the side that serves the file with -F) and no perf counters (--counters none: iperf3 opens
# none, and per-thread counters add to every context switch). Time: bytepath's is
# first byte sent to last byte received; iperf3's is its receiver's end.sum_received.seconds.
# The file is read once before the runs, so its pages are cached for every tool.
#
# Reported per size: each time, sendfile/readsend for each tool (the seeds measured 35-65 %),
# and bytepath/iperf3 for each mechanism (a measuring tool should not be slower than a peer).
#
# Exit status: 0 when everything ran; 2 if iperf3 is missing and could not be installed;
# 1 if a run failed.
#
# Environment:
#   SIZES="98M 1G"   file sizes (K/M/G = KiB/MiB/GiB)
#   REPS=5           transfers per tool and mechanism
#   CHUNK=64K        bytes per read/send/sendfile call
#   PORT_BASE=15301  first loopback port for the iperf3 server
#   SENDER_CPU=0 RECEIVER_CPU=1

set -euo pipefail

SIZES="${SIZES:-98M 1G}"
REPS="${REPS:-5}"
CHUNK="${CHUNK:-64K}"
PORT_BASE="${PORT_BASE:-15301}"
SENDER_CPU="${SENDER_CPU:-0}"
RECEIVER_CPU="${RECEIVER_CPU:-1}"

BENCH='file'
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer, got '$REPS'"
[[ "$PORT_BASE" =~ ^[0-9]+$ ]] || die "PORT_BASE must be a port number, got '$PORT_BASE'"
for c in "$SENDER_CPU" "$RECEIVER_CPU"; do
  [[ "$c" =~ ^[0-9]+$ ]] || die "CPU numbers must be integers, got '$c'"
done
[[ "$CHUNK" =~ ^[1-9][0-9]*[KM]?$ ]] || die "CHUNK must be a size such as 64K, got '$CHUNK'"
[[ -n "${SIZES// /}" ]] || die "SIZES is empty"
need_cmd iperf3 || install_pkgs iperf3 || true
require_cmds iperf3 python3 timeout cargo
build_bytepath

bytes_of() { # 98M -> bytes
  python3 -c "import sys; s=sys.argv[1]; u={'K':10,'M':20,'G':30}.get(s[-1],0); print(int(s[:-1] if u else s) << u)" "$1"
}

make_file() { # size path: pseudo-random content (iperf3 and bytepath serve the same bytes)
  local n
  n="$(bytes_of "$1")"
  (( n + (64 << 20) < $(df -B1 --output=avail "$WORK" | tail -1) )) || die "not enough space in $WORK for $1"
  head -c "$n" /dev/urandom >"$2"
  sync "$2"
  cat "$2" >/dev/null # warm: the pages are cached for every run below
}

# bytepath file on the file -> RESULT readsend mean ms, RESULT2 sendfile mean ms
bytepath_times() { # path
  local out="$WORK/bytepath.json"
  timeout 600 "$BYTEPATH" file --file "$1" --mechanisms readsend,sendfile --chunk "$CHUNK" \
    --reps "$REPS" --pin "$SENDER_CPU,$RECEIVER_CPU" --counters none --json --out "$WORK/bytepath-$RANDOM" >"$out" 2>"$WORK/bytepath.err" ||
    { cat "$WORK/bytepath.err" >&2; die "bytepath file failed"; }
  read -r RESULT RESULT2 <<<"$(python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = {s["mechanism"]: s["time_ms"]["mean"] for s in d["summaries"]}
print(t["readsend"], t["sendfile"])
PY
)"
}

# iperf3 serving the file REPS times -> RESULT mean ms (receiver's seconds)
iperf3_time() { # path [-Z]
  local total=0 i spid out="$WORK/iperf3.json" slog="$WORK/iperf3-server.log" ms
  for ((i = 0; i < REPS; i++)); do
    next_free_port
    timeout 120 iperf3 -s -1 -B 127.0.0.1 -p "$PORT" >"$slog" 2>&1 &
    spid=$!
    SERVER_PIDS+=("$spid")
    wait_bound tcp "$PORT" "$spid" "$slog"
    timeout 120 iperf3 -c 127.0.0.1 -p "$PORT" -F "$1" -l "$CHUNK" -A "$SENDER_CPU,$RECEIVER_CPU" "${@:2}" -J >"$out" ||
      { cat "$out" "$slog" >&2; die "iperf3 -F $* failed"; }
    stop_server "$spid"
    ms="$(python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['end']['sum_received']; print(e['seconds']*1e3)" "$out")"
    total="$(python3 -c "import sys; print(float(sys.argv[1]) + float(sys.argv[2]))" "$total" "$ms")"
  done
  RESULT="$(python3 -c "import sys; print(float(sys.argv[1]) / int(sys.argv[2]))" "$total" "$REPS")"
}

printf '%-6s %-10s %12s %12s %10s\n' size tool readsend_ms sendfile_ms sf/rs
for size in $SIZES; do
  f="$WORK/file-$size.bin"
  log "creating and warming a $size file"
  make_file "$size" "$f"
  log "$size: bytepath file (readsend, sendfile), $REPS reps each"
  bytepath_times "$f"
  bp_rs="$RESULT" bp_sf="$RESULT2"
  log "$size: iperf3 -F (read+send), $REPS runs"
  iperf3_time "$f"
  ip_rs="$RESULT"
  log "$size: iperf3 -F -Z (sendfile), $REPS runs"
  iperf3_time "$f" -Z
  ip_sf="$RESULT"
  printf '%-6s %-10s %12s %12s %10s\n' "$size" bytepath "$(fmt "$bp_rs" .2f)" "$(fmt "$bp_sf" .2f)" "$(ratio "$bp_sf" "$bp_rs")"
  printf '%-6s %-10s %12s %12s %10s\n' "$size" iperf3 "$(fmt "$ip_rs" .2f)" "$(fmt "$ip_sf" .2f)" "$(ratio "$ip_sf" "$ip_rs")"
  printf '%-6s %-10s %12s %12s\n' "$size" "bp/iperf3" "$(ratio "$bp_rs" "$ip_rs")" "$(ratio "$bp_sf" "$ip_sf")"
  rm -f "$f"
done

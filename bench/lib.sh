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

fmt() { python3 -c "import sys; print(format(float(sys.argv[1]), sys.argv[2]))" "$1" "$2"; }
ratio() { python3 -c "import sys; print(format(float(sys.argv[1]) / float(sys.argv[2]), '.3f'))" "$1" "$2"; }

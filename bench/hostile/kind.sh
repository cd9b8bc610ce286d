#!/usr/bin/env bash
# bench/hostile/kind.sh — the set-up every bench/hostile/*.sh kind shares (sourced, never run):
# the binary (BIN, else the debug one, else built), a work folder `dir` removed on exit with
# every job the kind started, a token in `$dir/token` made by keygen (mode 0600), and
# `start_server ARGS…`: `bytepath server --port 0 --token-file $dir/token ARGS…` (its log in
# `$dir/server.log`), waited for until its listening line, setting `server` (its pid) and
# `port`.
BIN=${BIN:-target/release/bytepath}
[ -x "$BIN" ] || BIN=target/debug/bytepath
[ -x "$BIN" ] || cargo build --quiet
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT
"$BIN" keygen "$dir/token" > /dev/null
start_server() {
  "$BIN" server --port 0 --token-file "$dir/token" "$@" > "$dir/line" 2> "$dir/server.log" &
  server=$!
  for _ in $(seq 200); do [ -s "$dir/line" ] && break; sleep 0.05; done
  port=$(awk '{print $5}' "$dir/line" | sed 's/.*://')
}

#!/usr/bin/env bash
# bench/sink.sh — `bytepath run --sink` against a bare C sink loop (bench/bare/sink.c), same
# link, same socket options, same mechanism, same pin: what bytepath's own cost is when the
# sender is all there is.
#
# Cases: MECHANISMS (copy, zerocopy) × SIZES (1K 16K 64K), one flow, the sender on SENDER_CPU.
#   bytepath  `bytepath run --sink --transport udp -m MECH -s SIZE --counters none` (64K with
#             --udp-split: two datagrams of 32 KiB, as one UDP datagram holds 65507 B at most);
#             the figure: the sending side's payload Gbit/s over the measured phase.
#   bare      bench/bare/sink.c in a sink this script builds as bytepath builds its own (two
#             namespaces, a veth pair at MTU 65535, the peer end bare: no address, no route,
#             forwarding and IPv6 off; a permanent neighbour entry for the peer's MAC; no default
#             route anywhere, checked before the first send), the same mechanism's system calls
#             and nothing else; the same figure.
# Each round runs both tools back to back for every case, their order rotated from round to
# round, and the ratio bytepath / bare is taken within the round (paired); the table gives the
# median ratio over ROUNDS and its spread (min..max). Target: >= 0.95 for every case. Both
# tools' zero-copy completions must read 0 copied: a sink copies nothing; the table says so.
#
# Timings taken while anything else builds or runs are not bytepath's cost: run it alone, e.g.
#   flock -x -w 3600 /tmp/bytepath-cpu.lock bench/sink.sh
# Exit status: 0 when everything ran (rows below target do not change it); 2 when not root, or
# ip, cc or python3 is missing; 1 if a run failed.
#
# Environment:
#   ROUNDS=5  DURATION=2 (measured seconds)  WARMUP=0.5 (seconds)  SENDER_CPU=0
#   SIZES="1K 16K 64K"  MECHANISMS="copy zerocopy"
#   BYTEPATH=<binary> (default: cargo build --release here)  OUT=<dir> (keeps rounds.tsv)
set -euo pipefail

ROUNDS="${ROUNDS:-5}"
DURATION="${DURATION:-2}"
WARMUP="${WARMUP:-0.5}"
SENDER_CPU="${SENDER_CPU:-0}"
SIZES="${SIZES:-1K 16K 64K}"
MECHANISMS="${MECHANISMS:-copy zerocopy}"
PORT_BASE=0 # lib.sh's port helpers are unused: the sink has no listener

BENCH=sink
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, got '$ROUNDS'"
for v in DURATION WARMUP; do
  [[ "${!v}" =~ ^[0-9]+(\.[0-9]{1,3})?$ && ! "${!v}" =~ ^0+(\.0*)?$ ]] ||
    die "$v must be a positive number of seconds (up to 3 decimals), got '${!v}'"
done
[[ "$SENDER_CPU" =~ ^[0-9]+$ ]] || die "SENDER_CPU must be an integer, got '$SENDER_CPU'"
for m in $MECHANISMS; do
  [[ "$m" == copy || "$m" == zerocopy ]] || die "MECHANISMS: '$m' is not one of copy, zerocopy"
done
[[ $(id -u) -eq 0 ]] || { echo "$BENCH: --sink and the bare sink's namespaces need root" >&2; exit 2; }
require_cmds ip cc python3 timeout
DURATION_MS="$(ms_of "$DURATION")"
WARMUP_MS="$(ms_of "$WARMUP")"
RUN_LIMIT=$(((DURATION_MS + WARMUP_MS) / 1000 + 60))
OUT="${OUT:-$WORK/out}"
mkdir -p "$OUT"
if [[ -n "${BYTEPATH:-}" ]]; then
  [[ -x "$BYTEPATH" ]] || die "BYTEPATH=$BYTEPATH is not an executable"
else
  require_cmds cargo
  build_bytepath
fi
BARE="$WORK/sink"
cc -O2 -Wall -pthread -o "$BARE" "$(dirname "${BASH_SOURCE[0]}")/bare/sink.c" ||
  die "could not build bench/bare/sink.c"

# ------------------------------------------------------------ the bare sink ---
# Names apart from bytepath's own (bytepath-<pid>-a/-b on 10.201.0.0/16).
NS_A="bpbench-$$-a"
NS_B="bpbench-$$-b"
DEV_A="bpbs$$a"
DEV_B="bpbs$$b"
DEST=10.202.0.2
MAC="02:62:71:$(printf '%02x:%02x:%02x' $((($$ >> 16) & 255)) $((($$ >> 8) & 255)) $(($$ & 255)))"
remove_sink() {
  ip netns del "$NS_A" 2>/dev/null || true
  ip netns del "$NS_B" 2>/dev/null || true
}
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup_all() { remove_sink; cleanup; }
trap cleanup_all EXIT
ip netns add "$NS_A"
ip netns add "$NS_B"
ip link add "$DEV_A" netns "$NS_A" type veth peer name "$DEV_B" netns "$NS_B" address "$MAC"
ip netns exec "$NS_A" sysctl -qw "net.ipv6.conf.$DEV_A.disable_ipv6=1"
ip netns exec "$NS_B" sysctl -qw "net.ipv6.conf.$DEV_B.disable_ipv6=1" net.ipv4.ip_forward=0
ip -n "$NS_A" addr add 10.202.0.1/30 dev "$DEV_A"
ip -n "$NS_A" link set "$DEV_A" mtu 65535 up
ip -n "$NS_B" link set "$DEV_B" mtu 65535 up
ip -n "$NS_A" neigh add "$DEST" lladdr "$MAC" dev "$DEV_A" nud permanent
for ns in "$NS_A" "$NS_B"; do
  for family in -4 -6; do
    [[ -z "$(ip -n "$ns" "$family" route show default)" ]] ||
      die "namespace $ns has a default route: refusing to send"
  done
done

# ---------------------------------------------------------------- runners ---
# Each prints "gbps copied_share" (copied share of zero-copy completions, - for copy).
RUN_NO=0
fail() { cat "$1" >&2; die "$2"; }

bare_run() { # mechanism size
  local out="$OUT/run-$RUN_NO-bare"
  timeout "$RUN_LIMIT" ip netns exec "$NS_A" "$BARE" "$1" "$(bytes_of "$2")" "$WARMUP_MS" \
    "$DURATION_MS" "$SENDER_CPU" "$DEST" >"$out" 2>&1 || fail "$out" "bare sink $1 $2 failed"
  python3 - "$out" <<'EOF' || fail "$out" "could not parse the bare sink's output"
import re, sys
f = dict(re.findall(r"(\w+)=([0-9.]+)", open(sys.argv[1]).read()))
c = int(f["completions"])
print(f["gbps"], f"{int(f['copied']) / c:.4f}" if c else "-")
EOF
}

bytepath_run() { # mechanism size
  local out="$OUT/run-$RUN_NO-bytepath" split=()
  (($(bytes_of "$2") > 65507)) && split=(--udp-split)
  timeout "$RUN_LIMIT" "$BYTEPATH" run --sink --transport udp -m "$1" -s "$2" "${split[@]}" \
    -d "${DURATION_MS}ms" --warmup "${WARMUP_MS}ms" --pin "$SENDER_CPU" --counters none \
    --json >"$out" 2>"$out.err" || fail "$out.err" "bytepath run --sink $1 $2 failed"
  python3 - "$out" <<'EOF' || fail "$out" "could not parse bytepath's output"
import json, sys
d = json.load(open(sys.argv[1]))
if d.get("status") != "completed" or d.get("errors"):
    sys.exit(f"status {d.get('status')!r}, errors {d.get('errors')}")
if len(d["sides"]) != 1:
    sys.exit(f"a sink run has one side, the sender; got {len(d['sides'])}")
zc = d.get("zerocopy") or {}
c = zc.get("completions") or 0
print(d["sides"][0]["throughput_gbps"], f"{zc['copied'] / c:.4f}" if c else "-")
EOF
}

# ----------------------------------------------------------------- rounds ---
TOOLS=(bare bytepath)
ROUNDS_TSV="$OUT/rounds.tsv" # mechanism, size, round, tool, gbps, copied share
: >"$ROUNDS_TSV"
log "bare: $BARE; bytepath: $BYTEPATH; $ROUNDS rounds of ${WARMUP}s + ${DURATION}s; CPU $SENDER_CPU"
for ((round = 1; round <= ROUNDS; round++)); do
  for size in $SIZES; do
    for mech in $MECHANISMS; do
      for ((i = 0; i < ${#TOOLS[@]}; i++)); do
        tool="${TOOLS[$(((i + round - 1) % ${#TOOLS[@]}))]}" # the order rotates each round
        log "round $round/$ROUNDS: $mech $size: $tool"
        RUN_NO=$((RUN_NO + 1))
        figures="$("${tool}_run" "$mech" "$size")"
        printf '%s\t%s\t%s\t%s\t%s\n' "$mech" "$size" "$round" "$tool" "${figures// /$'\t'}" >>"$ROUNDS_TSV"
      done
    done
  done
done

# ------------------------------------------------------------------ table ---
echo
echo "bytepath on a sink against a bare C sink loop: $ROUNDS interleaved rounds (tool order"
echo "  rotated each round), one UDP flow, sender on CPU $SENDER_CPU, ${WARMUP}s warm-up, ${DURATION}s measured;"
echo "  Gbit/s = the sender's payload over the measured phase; ratio = bytepath / bare within"
echo "  each round: median [min..max]; copied = share of zero-copy completions the kernel copied."
echo
python3 - "$ROUNDS_TSV" <<'EOF' | print_table 0 1 8
import statistics as st, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
cases = list(dict.fromkeys((r[0], r[1]) for r in rows))
val = {(r[0], r[1], r[2], r[3]): r[4:] for r in rows}
rounds = sorted({r[2] for r in rows}, key=int)
print("mechanism|size|bare Gbit/s|bytepath Gbit/s|ratio|spread|copied bare|copied bytepath|target|result")
for m, size in cases:
    bare = [float(val[(m, size, r, "bare")][0]) for r in rounds]
    bp = [float(val[(m, size, r, "bytepath")][0]) for r in rounds]
    ratios = [a / b for a, b in zip(bp, bare)]
    def copied(tool):
        shares = {val[(m, size, r, tool)][1] for r in rounds}
        return "-" if shares == {"-"} else f"{100 * max(float(s) for s in shares if s != '-'):.1f} %"
    ok = st.median(ratios) >= 0.95
    print(f"{m}|{size}|{st.median(bare):.2f}|{st.median(bp):.2f}|{st.median(ratios):.3f}|"
          f"{min(ratios):.3f}..{max(ratios):.3f}|{copied('bare')}|{copied('bytepath')}|>= 0.95|"
          + ("MET" if ok else "MISSED"))
EOF
echo
echo "per-round figures (mechanism, size, round, tool, Gbit/s, copied share): $ROUNDS_TSV"
[[ "$OUT" == "$WORK"/* ]] && cat "$ROUNDS_TSV"
echo "(a benchmark informs: MISSED rows do not change the exit status)"
exit 0

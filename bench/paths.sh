#!/usr/bin/env bash
# bench/paths.sh — every path for bytes, side by side, with what each byte costs in CPU.
#
# What it measures, in one run, all cross-CPU (sender on SENDER_CPU, receiver on RECEIVER_CPU):
#   1. One `bytepath sweep` over every sending mechanism (send, copy, gather, zerocopy, uring,
#      uring-gather, uring-zc, splice, sendfile) at SIZES and THREADS, stream: receiver
#      Gbit/s with its 95 % CI, CPU-ns per byte of the sender and of the receiver (getrusage),
#      the share of zero-copy sends the kernel copied anyway, and the zero-copy buffer pool.
#      A mechanism this kernel lacks shows up as skipped, with the reason.
#   2. The receive paths at RECV_SIZE, one `bytepath run` each with the send mechanism: recv,
#      uring-recv, zc-recv (with the share of bytes mapped rather than copied), trunc (discards
#      in the kernel: a lower bound of the receive cost, delivers nothing).
#   3. Peers in the same run and placement: bytepath send vs `iperf3 -l SIZE`, and bytepath
#      sendfile vs `iperf3 -Z -l SIZE` (iperf3's sendfile path), 1 flow, receiver Gbit/s.
#
# Why: the issue's question is which path to hand bytes to the kernel pays, and from which
# size; the peers show the reference paths run as fast as the tools people already trust.
# Exit status: 0 when everything ran (a benchmark informs); 2 if iperf3 is missing and could
# not be installed; 1 if a run failed.
#
# Environment:
#   SIZES="4K,64K,512K"  THREADS="1,2"  RECV_SIZE=64K
#   MIN_TIME=1s MAX_TIME=3s (per sweep point)  DURATION=3 (seconds per run and per peer run)
#   SENDER_CPU=0 RECEIVER_CPU=1  PORT_BASE=15401  OUT=<dir> (kept; default: a temp dir)
set -euo pipefail

SIZES="${SIZES:-4K,64K,512K}"
THREADS="${THREADS:-1,2}"
RECV_SIZE="${RECV_SIZE:-64K}"
MIN_TIME="${MIN_TIME:-1s}"
MAX_TIME="${MAX_TIME:-3s}"
DURATION="${DURATION:-3}"
SENDER_CPU="${SENDER_CPU:-0}"
RECEIVER_CPU="${RECEIVER_CPU:-1}"
PORT_BASE="${PORT_BASE:-15401}"
WARMUP=1

BENCH=paths
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ "$DURATION" =~ ^[1-9][0-9]*$ ]] || die "DURATION must be a positive integer (seconds), got '$DURATION'"
RUN_LIMIT=$((DURATION + WARMUP + 60))
PIN="$SENDER_CPU,$RECEIVER_CPU"
OUT="${OUT:-$WORK/out}"
mkdir -p "$OUT"

need_cmd iperf3 || install_pkgs iperf3 || true
need_cmd iperf3 || { echo "paths.sh: iperf3 is missing and could not be installed" >&2; exit 2; }
require_cmds python3 taskset timeout cargo
build_bytepath

# ------------------------------------------------------ 1. sending paths ----
log "sweep: every mechanism x sizes $SIZES x threads $THREADS (pin $PIN, $MIN_TIME-$MAX_TIME a point)"
rm -rf "$OUT/send"
timeout 3600 "$BYTEPATH" sweep --mechanisms all --sizes "$SIZES" --threads "$THREADS" \
  --patterns stream --pin "$PIN" --counters none --min-time "$MIN_TIME" --max-time "$MAX_TIME" \
  --warmup 200ms --out "$OUT/send" >"$OUT/send.log" 2>&1 ||
  { cat "$OUT/send.log" >&2; die "the sweep failed"; }

# ------------------------------------------------------ 2. receive paths ----
# zc-recv maps only pages the kernel allocated whole, which on loopback only a zero-copy
# sender's data lands in: so the zerocopy sender runs with recv and zc-recv too.
for pair in send:recv send:uring-recv send:zc-recv send:trunc zerocopy:recv zerocopy:zc-recv; do
  IFS=: read -r mech recv <<<"$pair"
  log "run: $mech, $RECV_SIZE, --recv $recv"
  # A skipped path exits 1 with its record: keep it, the table says why.
  timeout "$RUN_LIMIT" "$BYTEPATH" run -m "$mech" -s "$RECV_SIZE" --recv "$recv" --pin "$PIN" \
    --duration "${DURATION}s" --warmup "${WARMUP}s" --counters none --json \
    >"$OUT/recv-$mech-$recv.json" 2>"$OUT/recv-$mech-$recv.err" ||
    [[ -s "$OUT/recv-$mech-$recv.json" ]] ||
    { cat "$OUT/recv-$mech-$recv.err" >&2; die "bytepath run -m $mech --recv $recv failed"; }
done

# ----------------------------------------------------------------- peers ----
PEER_ROWS=()
for size in ${SIZES//,/ }; do
  log "iperf3 -l $size and iperf3 -Z -l $size (client CPU $SENDER_CPU, server CPU $RECEIVER_CPU)"
  iperf3_stream "$size" "$SENDER_CPU" "$RECEIVER_CPU"
  plain="$RESULT"
  iperf3_stream "$size" "$SENDER_CPU" "$RECEIVER_CPU" -Z
  PEER_ROWS+=("$size $plain $RESULT")
done
printf '%s\n' "${PEER_ROWS[@]}" >"$OUT/peers.txt"

# ---------------------------------------------------------------- tables ----
python3 - "$OUT" <<'PY' | tee "$OUT/tables.txt"
import json, sys, os
out = sys.argv[1]
ORDER = ["send", "copy", "gather", "zerocopy", "uring", "uring-gather", "uring-zc", "splice", "sendfile"]
records = [json.loads(l) for l in open(os.path.join(out, "send", "results.jsonl")) if l.strip()]
def size_of(text):
    units = {"K": 1 << 10, "M": 1 << 20}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
def ns(v):
    return "n/a" if v is None else f"{v:.3f}"
def table(rows, left):
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for n, r in enumerate(rows):
        print("  ".join(c.ljust(w[i]) if i in left else c.rjust(w[i]) for i, c in enumerate(r)).rstrip())
        if n == 0:
            print("  ".join("-" * x for x in w))

send_gbps = {}
for r in records:
    c = r["config"]
    if c["mechanism"] == "send" and r["status"] == "completed":
        send_gbps[(c["message_size_bytes"], c["threads"])] = r["statistics"]["summary"]["mean"]
rows = [["mechanism", "size", "flows", "Gbit/s (95 % CI)", "vs send", "sender ns/B", "receiver ns/B", "copied anyway", "pool"]]
key = lambda r: (r["config"]["threads"], r["config"]["message_size_bytes"], ORDER.index(r["config"]["mechanism"]))
for r in sorted(records, key=key):
    c = r["config"]
    size, flows = c["message_size_bytes"], c["threads"]
    label = f"{size >> 10} KiB"
    if r["status"] != "completed":
        why = r.get("skipped_reason") or "; ".join(r.get("errors", []))
        rows.append([c["mechanism"], label, str(flows), f"{r['status']}: {why}"[:60], "", "", "", "", ""])
        continue
    s = r["statistics"]["summary"]
    base = send_gbps.get((size, flows))
    z = r.get("zerocopy") or {}
    copied = z.get("copied_anyway_percent")
    rows.append([c["mechanism"], label, str(flows), f"{s['mean']:.2f} ± {s['ci95_half_width']:.2f}",
                 f"{s['mean'] / base:.2f}x" if base else "n/a",
                 ns(r["sides"][0]["cpu_ns_per_byte"]), ns(r["sides"][1]["cpu_ns_per_byte"]),
                 "—" if not z else ("no completion" if copied is None else f"{copied:.1f} %"),
                 str(z.get("pool_messages", "—")) if z else "—"])
print("1. Sending paths, stream, loopback TCP, cross-CPU (ns/B: CPU time per payload byte, getrusage)")
table(rows, {0, 1})

print()
print("2. Receive paths, 1 flow")
rows = [["sender", "--recv", "Gbit/s", "receiver ns/B", "sender ns/B", "mapped / copied", "note"]]
pairs = [("send", "recv"), ("send", "uring-recv"), ("send", "zc-recv"), ("send", "trunc"),
         ("zerocopy", "recv"), ("zerocopy", "zc-recv")]
for mech, recv in pairs:
    path = os.path.join(out, f"recv-{mech}-{recv}.json")
    r = json.load(open(path))
    if r["status"] != "completed":
        why = r.get("skipped_reason") or "; ".join(r.get("errors", []))
        rows.append([mech, recv, "", "", "", "", f"{r['status']}: {why}"[:80]])
        continue
    rc = r.get("receive") or {}
    mapped = rc.get("mapped_percent")
    note = "discarded in the kernel: NOT delivered, a lower bound" if recv == "trunc" else rc.get("summary", "")
    rows.append([mech, recv, f"{r['sides'][1]['throughput_gbps']:.2f}", ns(r["sides"][1]["cpu_ns_per_byte"]),
                 ns(r["sides"][0]["cpu_ns_per_byte"]),
                 "—" if mapped is None else f"{mapped:.1f} % mapped", note[:80]])
table(rows, {0, 1, 6})

print()
print("3. Peers, same run and placement, 1 flow, receiver Gbit/s")
rows = [["size", "bytepath send", "iperf3", "ratio", "bytepath sendfile", "iperf3 -Z", "ratio"]]
def bp(mech, size):
    for r in records:
        c = r["config"]
        if (c["mechanism"], c["message_size_bytes"], c["threads"], r["status"]) == (mech, size, 1, "completed"):
            return r["statistics"]["summary"]["mean"]
for line in open(os.path.join(out, "peers.txt")):
    text, plain, zc = line.split()
    size = size_of(text)
    a, b = bp("send", size), bp("sendfile", size)
    ratio = lambda x, y: f"{x / float(y):.2f}x" if x else "n/a"
    rows.append([text, f"{a:.2f}" if a else "n/a", f"{float(plain):.2f}", ratio(a, plain),
                 f"{b:.2f}" if b else "n/a", f"{float(zc):.2f}", ratio(b, zc)])
table(rows, {0})
print()
print("note: iperf3 -Z sendfile()s from its own buffer file, bytepath sendfile from a memfd holding the message;")
print("      both pay the receiver's copy out of the socket, which bounds loopback throughput.")
PY
log "results: $OUT (kept only when OUT is set)"

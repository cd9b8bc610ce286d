#!/usr/bin/env bash
# bench/profile.sh — where each mechanism's CPU goes: `bytepath run --profile` for send, copy,
# gather, zerocopy, splice, sendfile and uring-zc at 256 B, 4 KiB and 64 KiB, one flow, pinned
# cross (sender CPU 0, receiver CPU 1). Prints one row per (mechanism, size, side): the copy
# categories' share (user→kernel, kernel→user, in user space), the largest other categories,
# copies' worth of CPU per byte (the copy categories' CPU-ns per byte over this host's memcpy
# cost per byte, from a quick probe's DRAM point), the share at irq re-enable points (timer
# sampling's skew) and the samples.
#
# A benchmark, not a test: the figures are this machine's and move with its regimes. Each
# point is measured ROUNDS times in rounds (mechanisms and sizes in the same order every
# round); the table gives the median over rounds of each share and the min..max of the copy
# share, so a reader sees how much a single profile can move.
#
# Timings taken while anything else runs are not the machine's: run it alone, e.g.
#   flock -x -w 3600 /tmp/bytepath-cpu.lock bench/profile.sh
# Needs root (or perf_event_paranoid <= 1) to sample kernel code; without it every profile is
# unavailable and the script says so. Exit status: 0 when everything ran; 2 if a required
# command is missing; 1 if a run failed.
#
# Environment:
#   ROUNDS=3  DURATION=2 (measured seconds)  WARMUP=0.5  PIN=cross
#   MECHANISMS="send copy gather zerocopy splice sendfile uring-zc"  SIZES="256 4K 64K"
#   BYTEPATH=<binary> (default: cargo build --release here)  OUT=<dir> (keeps every record)
set -euo pipefail

ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-2}"
WARMUP="${WARMUP:-0.5}"
PIN="${PIN:-cross}"
MECHANISMS="${MECHANISMS:-send copy gather zerocopy splice sendfile uring-zc}"
SIZES="${SIZES:-256 4K 64K}"
BENCH=profile
PORT_BASE=0
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
require_cmds python3

if [[ -z "${BYTEPATH:-}" ]]; then
  build_bytepath
fi
OUT="${OUT:-$WORK}"
mkdir -p "$OUT"

log "$ROUNDS round(s) of ${DURATION}s profiled runs, pin $PIN: $MECHANISMS × $SIZES"
for round in $(seq 1 "$ROUNDS"); do
  for size in $SIZES; do
    for mech in $MECHANISMS; do
      file="$OUT/$mech-$size-$round.json"
      log "round $round: $mech $size"
      "$BYTEPATH" run -m "$mech" -s "$size" --duration "${DURATION}s" --warmup "${WARMUP}s" \
        --pin "$PIN" --counters none --profile --json >"$file" ||
        die "bytepath run -m $mech -s $size failed (its output: $file)"
    done
  done
done

python3 - "$OUT" "$ROUNDS" <<'EOF'
import json, glob, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
COPY = ["copy_user_to_kernel", "copy_kernel_to_user", "copy_in_user"]
rows = {}
memcpy = None
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    mech, size, _ = os.path.basename(path)[:-5].rsplit("-", 2)
    r = json.load(open(path))
    memcpy = memcpy or (r.get("profiled_visit") or {}).get("memcpy_source")
    for side in r["sides"]:
        p = side.get("profile") or {}
        key = (mech, size, side["side"])
        rows.setdefault(key, []).append(p)
def med(xs):
    return statistics.median(xs) if xs else float("nan")
order = {m: i for i, m in enumerate(os.environ.get("MECHANISMS", "send copy gather zerocopy splice sendfile uring-zc").split())}
sizes = {s: i for i, s in enumerate(os.environ.get("SIZES", "256 4K 64K").split())}
print(f"{'mechanism':<9} {'size':>4} {'side':<8} {'u→k %':>6} {'k→u %':>6} {'user %':>6} "
      f"{'copy % (min..max)':>18} {'copies/B':>8} {'skew %':>6} {'samples':>7}  largest others")
for key in sorted(rows, key=lambda k: (sizes.get(k[1], 9), order.get(k[0], 99), k[2])):
    ps = rows[key]
    measured = [p for p in ps if p.get("status") == "measured"]
    mech, size, side = key
    if not measured:
        why = ps[0].get("reason", "no profile") if ps else "no profile"
        print(f"{mech:<9} {size:>4} {side:<8} unavailable: {why}")
        continue
    share = lambda p, c: next(x["share"] for x in p["categories"] if x["name"] == c)
    cats = {c["name"]: med([share(p, c["name"]) for p in measured]) for c in measured[0]["categories"]}
    copy = [sum(share(p, c) for c in COPY) for p in measured]
    copies = [p["copies_per_byte"]["copies"] for p in measured if p.get("copies_per_byte")]
    skew = med([p["skew"]["irq_reenable_share"] for p in measured])
    others = sorted(((v, k) for k, v in cats.items() if k not in COPY), reverse=True)[:3]
    print(f"{mech:<9} {size:>4} {side:<8} {100*cats['copy_user_to_kernel']:6.1f} "
          f"{100*cats['copy_kernel_to_user']:6.1f} {100*cats['copy_in_user']:6.1f} "
          f"{100*med(copy):6.1f} ({100*min(copy):4.1f}..{100*max(copy):4.1f}) "
          f"{med(copies):8.2f} {100*skew:6.1f} {int(med([p['samples'] for p in measured])):7d}  "
          + ", ".join(f"{k} {100*v:.0f}" for v, k in others))
print(f"\n{rounds} round(s); medians over rounds; copy % = the three copy categories; copies/B = "
      f"copy categories' CPU-ns per byte / memcpy ns per byte ({memcpy}); skew % = samples at "
      "irq re-enable points before recharging.")
EOF

#!/usr/bin/env bash
# bench/partial_regression.sh — does `compare` see a regression of some points only?
#
# Sweeps one matrix (18 points: copy, gather, zerocopy x 1K, 16K, 64K x 1 and 4 flows, default
# settings) twice: A as it is, B with --verify, which checks every byte and so slows the points
# where checking dominates (the large sizes) and hardly the small ones. Then
# `bytepath compare A B` (and --json), and prints per point B/A with its corrected interval and
# verdict, the between-sweep spread the comparison used and its source, and whether the
# points that slowed beyond 10 % by their point estimate were flagged slower (target: all of
# them) while points within 3 % were not (target: none flagged).
# It informs; it exits 0 whatever the figures, 1 if a sweep or the comparison failed.
#
# Environment: SIZES=1K,16K,64K THREADS=1,4 SETTLE_S=10 OUT=<dir> (kept)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bytepath-bench-partial.XXXXXX")}"
mkdir -p "$OUT"
echo "partial_regression.sh: building bytepath" >&2
cargo build --release --quiet
BIN=./target/release/bytepath

sweep() { # name extra-args...
  local name=$1; shift
  rm -rf "${OUT:?}/$name"
  sync; sleep "${SETTLE_S:-10}"
  "$BIN" sweep --mechanisms copy,gather,zerocopy --sizes "${SIZES:-1K,16K,64K}" \
    --threads "${THREADS:-1,4}" "$@" --out "$OUT/$name" >"$OUT/$name.log" 2>&1 \
    || { tail -5 "$OUT/$name.log" >&2; echo "partial_regression.sh: sweep $name failed" >&2; exit 1; }
}
echo "partial_regression.sh: sweep A (plain)" >&2
sweep a
echo "partial_regression.sh: sweep B (--verify)" >&2
sweep b --verify
"$BIN" compare "$OUT/a" "$OUT/b" >"$OUT/compare.txt" || { cat "$OUT/compare.txt" >&2; exit 1; }
"$BIN" compare --json "$OUT/a" "$OUT/b" >"$OUT/compare.json" || { echo "partial_regression.sh: compare --json failed" >&2; exit 1; }
cat "$OUT/compare.txt"
python3 - "$OUT/compare.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
moved = kept = moved_flagged = kept_flagged = 0
for p in doc["points"]:
    v = p.get("verdict")
    if not p.get("corrected"):
        continue
    r = p["corrected"]["ratio"]
    if r < 0.90:
        moved += 1
        moved_flagged += v == "slower"
    elif abs(r - 1) <= 0.03:
        kept += 1
        kept_flagged += v in ("faster", "slower")
b = doc.get("between", {})
print(f"between-sweep spread used: {b.get('tau')} ({b.get('source')}); Q {b.get('q')} on {b.get('df')} df; warning: {b.get('warning')}")
print(f"slowed > 10 %: {moved_flagged}/{moved} flagged slower -> {'PASS' if moved_flagged == moved else 'MISS'} (target all)")
print(f"within 3 %:    {kept_flagged}/{kept} flagged -> {'PASS' if kept_flagged == 0 else 'MISS'} (target none)")
PY
echo "results: $OUT" >&2

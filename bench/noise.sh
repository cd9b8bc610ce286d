#!/usr/bin/env bash
# bench/noise.sh — how noisy is a pair here, and which design of the visits makes it quieter?
#
# For each variant of the visits, two sweeps of one build (an A/A pair) of the crossover cells
# the issue names: copy, gather, zerocopy x 1 KiB, 16 KiB, 64 KiB x 1 and 4 flows (18 points),
# every point given exactly ROUNDS rounds (the budget is too small for adaptive rounds), then
# bench/noise.py reads the folders and prints, per variant:
#   - the per-round log-ratio spread of a pair (gather/copy, zerocopy/copy; median over the 12
#     cells) and its lag-1 autocorrelation rho, pooled over cells, on the headline figure and
#     on the sending side's CPU per byte (pairing on CPU instead of Gbit/s);
#   - the spread of one point's log visit means in one sweep;
#   - the between-sweep spread tau of the A/A pair (DerSimonian-Laird and a robust MAD one);
#   - each canary component's spread over rounds and its A/A ratio between the two processes.
# It writes $OUT/noise.json; tests/data/noise.json is the default variant's copy of it.
# Variants (VARIANTS, comma-separated): default (100 ms visits), short (50 ms), long (250 ms).
#
# Environment: ROUNDS=16 VARIANTS=default,short,long SETTLE_S=5 OUT=<dir> (kept)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bytepath-bench-noise.XXXXXX")}"
mkdir -p "$OUT"
echo "noise.sh: building bytepath" >&2
cargo build --release --quiet
BIN=./target/release/bytepath
ROUNDS="${ROUNDS:-16}"

visit_of() {
  case "$1" in
    default) echo 100ms ;;
    short) echo 50ms ;;
    long) echo 250ms ;;
    *) echo "noise.sh: unknown variant '$1' (default, short, long)" >&2; exit 2 ;;
  esac
}

args=()
for v in ${VARIANTS:-default,short,long}; do :; done
IFS=, read -r -a variants <<<"${VARIANTS:-default,short,long}"
for v in "${variants[@]}"; do
  visit=$(visit_of "$v")
  for side in A B; do
    sync; sleep "${SETTLE_S:-5}"
    start=$(date +%s.%N)
    "$BIN" sweep --mechanisms copy,gather,zerocopy --sizes 1K,16K,64K --threads 1,4 \
      --min-visits "$ROUNDS" --budget 0.1s --visit "$visit" --counters none \
      --out "$OUT/$v-$side" >"$OUT/$v-$side.log" 2>&1 || { echo "noise.sh: sweep $v-$side failed (see $OUT/$v-$side.log)" >&2; exit 1; }
    echo "noise.sh: $v $side: $(echo "$(date +%s.%N) - $start" | bc) s" >&2
  done
  args+=("$v" "$OUT/$v-A" "$OUT/$v-B")
done
python3 bench/noise.py "${args[@]}" "$OUT/noise.json"
echo "noise.sh: folders and noise.json in $OUT" >&2

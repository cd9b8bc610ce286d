#!/usr/bin/env bash
# bench/repeatability.sh — the same sweep twice: do its figures and answers hold up?
#
# Runs one matrix (the seeds' 48 points by default: copy, gather, zerocopy x 256 B-16 KiB x
# 1, 2, 4, 8 threads, stream) twice, one sweep after the other, each with its own seed, and
# prints:
#   - how many points `bytepath compare` flags faster or slower after its Holm correction
#     (target 0: the two sweeps measured the same build on the same machine), and how many
#     it finds equivalent or undecided;
#   - for every derived answer of the report, whether its verdict (who beats whom, from which
#     size; figures may differ within their intervals) is the same in both reports, and over
#     every cell of the answers' families (answers.json `cells`) the share whose state
#     (beats / slower / equivalent / undecided) is the same in both (target >= 90 %);
#   - over the crossover cells (answers.json `cells` of the crossover questions), the share
#     decided in each sweep: beats, slower or equivalent (target >= 90 %);
#   - each sweep's wall time (target <= 120 s) and peak RSS (target <= 64 MiB).
# It informs; it exits 0 whatever the figures, 1 if a sweep or the comparison failed.
#
# Environment: MECHANISMS=copy,gather,zerocopy SIZES=256,1K,4K,16K THREADS=1,2,4,8
#              VISITS=4 VISIT=100ms WARMUP=25ms SLICE=25ms SETTLE_S=10 (the sweep's
#              defaults) BUDGET=<the sweep's default unless given>
#              OUT=<dir> (kept)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

OUT="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bytepath-bench-repeat.XXXXXX")}"
mkdir -p "$OUT"
command -v /usr/bin/time >/dev/null || { echo "repeatability.sh: needs GNU time (Debian package 'time')" >&2; exit 2; }
echo "repeatability.sh: building bytepath" >&2
cargo build --release --quiet
BIN=./target/release/bytepath

# Lets the machine settle before a sweep: the writeback of a build that just ended (gigabytes
# of artifacts) slowed system calls by half here (getpid 200 against 138 ns at the start of
# the next sweep) and every point of the sweep that followed it by about 9 %.
settle() {
  sync
  sleep "${SETTLE_S:-10}"
}

sweep() { # name
  local dir="$OUT/$1" start end
  rm -rf "$dir"
  settle
  start=$(date +%s.%N)
  /usr/bin/time -f "%M" -o "$OUT/$1.rss" "$BIN" sweep \
    --mechanisms "${MECHANISMS:-copy,gather,zerocopy}" --sizes "${SIZES:-256,1K,4K,16K}" \
    --threads "${THREADS:-1,2,4,8}" --patterns stream --visits "${VISITS:-4}" \
    --visit "${VISIT:-100ms}" --warmup "${WARMUP:-25ms}" --slice "${SLICE:-25ms}" \
    ${BUDGET:+--budget "$BUDGET"} --out "$dir" >"$OUT/$1.log" 2>&1 \
    || { tail -5 "$OUT/$1.log" >&2; echo "repeatability.sh: sweep $1 failed" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$start $end" >"$OUT/$1.wall"
}

echo "repeatability.sh: sweep A" >&2
sweep a
echo "repeatability.sh: sweep B" >&2
sweep b
"$BIN" compare "$OUT/a" "$OUT/b" >"$OUT/compare.txt" || { cat "$OUT/compare.txt" >&2; exit 1; }

python3 - "$OUT" <<'PY'
import json, re, sys
out = sys.argv[1]
text = open(f"{out}/compare.txt").read()
m = re.search(r"(\d+) points compared: (\d+) faster, (\d+) slower, (\d+) equivalent within [^,]*, (\d+) undecided, (\d+) cannot be judged; (\d+) tests?, ([^,]*) at", text)
total, faster, slower, equivalent, undecided, unjudged, tests, method = m.groups()
flagged = int(faster) + int(slower)
print(f"compare A -> B:    {flagged} of {total} points flagged ({faster} faster, {slower} slower; {equivalent} equivalent, {undecided} undecided, {unjudged} cannot be judged; {tests} tests, {method})  -> {'PASS' if flagged == 0 else 'MISS'} (target 0)")
answers = [json.load(open(f"{out}/{s}/answers.json")) for s in "ab"]
agree = 0
judged = 0
for a, b in zip(*answers):
    if a["verdict"] is None:
        print(f"  figure only:     {a['question']}")
        continue
    judged += 1
    same_verdict = a["verdict"] == b["verdict"]
    agree += same_verdict
    print(f"  {'same     ' if same_verdict else 'DIFFERENT'}        {a['question']}")
    if not same_verdict:
        print(f"                     A: {a['verdict']}\n                     B: {b['verdict']}")
print(f"answers:           {agree}/{judged} verdicts the same in both reports  -> {'PASS' if agree == judged else 'MISS'}")
cells_same = cells_all = 0
for a, b in zip(*answers):
    states_b = {c["cell"]: c["state"] for c in b.get("cells", [])}
    for c in a.get("cells", []):
        if c["cell"] in states_b:
            cells_all += 1
            cells_same += c["state"] == states_b[c["cell"]]
    counts = {}
    for c in a.get("cells", []):
        counts[c["state"]] = counts.get(c["state"], 0) + 1
    if counts:
        print(f"  cells of A:      {a['question']}: {counts}")
share = cells_same / max(1, cells_all)
for s, a in zip("AB", answers):
    states = [c["state"] for q in a if q.get("question", "").lower().find("beat") >= 0 for c in q.get("cells", [])]
    decided = sum(st in ("beats", "slower", "equivalent") for st in states)
    share_d = decided / max(1, len(states))
    print(f"decided in {s}:      {decided}/{len(states)} crossover cells beats, slower or equivalent ({100*share_d:.0f} %)  -> {'PASS' if share_d >= 0.9 else 'MISS'} (target >= 90 %)")
print(f"cell states:       {cells_same}/{cells_all} the same in both ({100*share:.0f} %)  -> {'PASS' if share >= 0.9 else 'MISS'} (target >= 90 %)")
for s in "ab":
    start, end = map(float, open(f"{out}/{s}.wall").read().split())
    rss = int(open(f"{out}/{s}.rss").read()) / 1024
    wall = end - start
    print(f"sweep {s.upper()}:           {wall:.1f} s wall (target <= 120 s) -> {'PASS' if wall <= 120 else 'OVER'}; peak RSS {rss:.1f} MiB (target <= 64) -> {'PASS' if rss <= 64 else 'OVER'}")
PY
echo "results: $OUT (compare.txt, a/, b/)" >&2

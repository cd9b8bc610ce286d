"""bench/many_core_table.py OUT CPUS — the one table of bench/many_core.sh, read from what
bytepath wrote under OUT (sweep/probe.json and report.md, servers/results.jsonl and report.md)
and bench/crr.sh's table (crr.txt). Figures come from bytepath's own files: the share of the
roofline is the cell report.md prints, so the table states the rule the report applies."""
import json
import re
import statistics
import sys
from pathlib import Path

out, cpus = Path(sys.argv[1]), sys.argv[2]
rows = []  # (check, figure, target, result)


def roofline():
    probe = json.loads((out / "sweep/probe.json").read_text())
    curve = (probe.get("memcpy_roofline") or {}).get("by_threads") or {}
    steps = [
        f"{p['threads']} → {p['aggregate']['best_gb_per_s']:.1f}"
        for p in curve.get("points", [])
        if p.get("aggregate")
    ]
    rows.append(("memcpy curve (GB/s by threads)", ", ".join(steps) or "not measured", "", "measured"))
    lines = (out / "sweep/report.md").read_text().splitlines()
    header = next(i for i, l in enumerate(lines) if "of memcpy roofline" in l and l.startswith("|"))
    column = [c.strip() for c in lines[header].split("|")].index("of memcpy roofline")
    by_threads = {}
    for line in lines[header + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.split("|")]
        share = re.match(r"([0-9.]+) %", cells[column])
        if share:
            threads = int(cells[1].rsplit("/", 1)[-1])
            by_threads.setdefault(threads, []).append((float(share.group(1)), cells[1], cells[column]))
    for threads in sorted(by_threads):
        share, key, cell = max(by_threads[threads])
        explained = ":" in cell
        ok = share <= 100 or explained
        result = "PASS" if ok else "OVER (unexplained)"
        rows.append((f"of roofline, {threads} flows (highest)", f"{cell} at {key}", "≤ 100 % or says why", result))


def servers():
    records = [json.loads(l) for l in (out / "servers/results.jsonl").read_text().splitlines() if l.strip()]
    points = {}
    for r in records:
        if r.get("status") != "completed" or not r.get("metrics"):
            continue
        c, m = r["config"], r["metrics"]
        points.setdefault((c["clients"], c["model"]), []).append((c, m))
    for (clients, model), visits in sorted(points.items()):
        c = visits[0][0]
        rps = statistics.mean(m["requests_per_s"] or 0 for _, m in visits)
        share = max(m["client"]["cpu_share_per_thread"] or 0 for _, m in visits)
        limited = any(m["client"].get("load_limited") for _, m in visits)
        unserved = max(m.get("unserved_clients", 0) for _, m in visits)
        figure = (f"{rps / 1000:.0f} k req/s, {c['client_threads']} client threads at "
                  f"{share * 100:.0f} % each, {unserved} unserved")
        ok = share < 0.9 or limited
        result = ("PASS (load-limited: not ranked)" if limited else "PASS") if ok else "FAIL (not marked)"
        rows.append((f"servers {model} {clients} clients", figure, "< 90 % or marked", result))
    report = (out / "servers/report.md").read_text()
    leaders = re.findall(r"\*\*Most requests/s\*\*: ([^\n]*)", report)
    for line in leaders:
        rows.append(("servers leader", line[:150], "", "stated"))


def crr():
    table = (out / "crr.txt").read_text().splitlines()
    for line in table:
        cells = [c.strip() for c in line.split("|")]
        if len(cells) == 7 and cells[2].startswith("bytepath /"):
            mode, ratio, spread, target = cells[1], cells[3], cells[4], cells[5]
            try:
                value = float(ratio)
                low, high = (0.95, None) if target.startswith(">=") else (0.90, 1.10)
                ok = value >= low and (high is None or value <= high)
                result = "PASS" if ok else "MISSED"
            except ValueError:
                result = "n/a"
            rows.append((f"crr {mode} close, {cells[2]}", f"{ratio} ({spread})", target, result))


for part in (roofline, servers, crr):
    try:
        part()
    except (OSError, ValueError, KeyError, StopIteration) as e:
        rows.append((part.__name__, f"could not be read: {e!r}", "", "FAILED"))

print(f"\nbytepath on {cpus} CPUs: issue 35's many-core checks")
print("| check | figure | target | result |")
print("|---|---|---|---|")
for row in rows:
    print("| " + " | ".join(row) + " |")

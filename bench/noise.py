#!/usr/bin/env python3
"""bench/noise.py — the noise of a pair, read from sweep folders (see bench/noise.sh).

For each variant (a design of the visits: its folder pair A and B, two sweeps of one build):
  - per crossover cell (gather or zerocopy against copy, one size, one flow count) the
    per-round log-ratio log(challenger/copy) of the headline figure, paired by round: its SD
    (the spread of a pair, per round) and its lag-1 autocorrelation rho (pooled over cells:
    the mean over cells of each cell's rho, and the rho of all cells' centred series together);
  - the same on the sending side's CPU per byte (lower is better: log(copy/challenger));
  - per point, the SD of the log visit means inside one sweep;
  - between the two sweeps, per point, log(B mean / A mean) and its SE from the visits: the
    between-sweep spread tau by DerSimonian-Laird over all points, and a robust one (MAD of the
    log ratios around their median, less the median within-sweep variance);
  - the canary per component: the SD of its log per-round cost in one sweep, and the two
    sweeps' log ratio of geometric means (what an A/A shows between two processes).
Prints one table and writes the JSON given as its last argument.
"""
import json, math, statistics, sys, collections

CHALLENGERS = ("gather", "zerocopy")


def visits(folder):
    out = collections.defaultdict(dict)  # key -> round -> record
    for line in open(f"{folder}/visits.jsonl"):
        r = json.loads(line)
        v = r.get("visit") or {}
        if r.get("status") != "completed" or v.get("kind") != "headline":
            continue
        if (v.get("interference") or {}).get("disturbed"):
            continue  # the sweep makes a disturbed visit once more at its round's end
        c = r["config"]
        side = r["sides"][1] if c["pattern"] == "stream" else r["sides"][0]
        head = side["throughput_gbps"] if c["pattern"] == "stream" else side["messages_per_s"]
        out[v["key"]][v["round"]] = (head, r["sides"][0].get("cpu_ns_per_byte"))
    return out


def lag1(xs):
    if len(xs) < 4:
        return None
    m = statistics.fmean(xs)
    d = [x - m for x in xs]
    den = sum(x * x for x in d)
    return sum(a * b for a, b in zip(d, d[1:])) / den if den > 0 else None


def cells(points):
    for key in points:
        mech, pattern, size, flows = key.split("/")[:4]
        if mech not in CHALLENGERS:
            continue
        base = f"copy/{pattern}/{size}/{flows}"
        if base in points:
            yield key, base


def pair_noise(points, which):
    sds, rhos, centred = [], [], []
    for key, base in cells(points):
        c, b = points[key], points[base]
        rounds = sorted(set(c) & set(b))
        if which == "headline":
            xs = [math.log(c[r][0] / b[r][0]) for r in rounds if c[r][0] > 0 and b[r][0] > 0]
        else:
            xs = [math.log(b[r][1] / c[r][1]) for r in rounds if (c[r][1] or 0) > 0 and (b[r][1] or 0) > 0]
        if len(xs) < 4:
            continue
        sds.append(statistics.stdev(xs))
        rho = lag1(xs)
        if rho is not None:
            rhos.append(rho)
        m = statistics.fmean(xs)
        centred.append([x - m for x in xs])
    num = sum(a * b for s in centred for a, b in zip(s, s[1:]))
    den = sum(x * x for s in centred for x in s)
    return {
        "cells": len(sds),
        "round_log_ratio_sd_median": statistics.median(sds) if sds else None,
        "round_log_ratio_sd_p90": sorted(sds)[int(0.9 * (len(sds) - 1))] if sds else None,
        "rho_mean": statistics.fmean(rhos) if rhos else None,
        "rho_pooled": num / den if den > 0 else None,
        "per_cell_sd": sorted(sds),
    }


def point_logs(points):
    return {k: [math.log(v[0]) for v in r.values() if v[0] > 0] for k, r in points.items()}


def dersimonian_laird(est):
    w = [1 / (se * se) for _, se in est]
    s = sum(w)
    mean = sum(wi * d for wi, (d, _) in zip(w, est)) / s
    q = sum(wi * (d - mean) ** 2 for wi, (d, _) in zip(w, est))
    spread = s - sum(wi * wi for wi in w) / s
    return max(0.0, (q - (len(est) - 1)) / spread), q


def between(a, b):
    la, lb = point_logs(a), point_logs(b)
    est = []
    for k in sorted(set(la) & set(lb)):
        x, y = la[k], lb[k]
        if len(x) < 2 or len(y) < 2:
            continue
        d = statistics.fmean(y) - statistics.fmean(x)
        se = math.sqrt(statistics.variance(x) / len(x) + statistics.variance(y) / len(y))
        est.append((d, se))
    if len(est) < 3:
        return {}
    tau2, q = dersimonian_laird(est)
    ds = [d for d, _ in est]
    med = statistics.median(ds)
    mad = 1.4826 * statistics.median(abs(d - med) for d in ds)
    robust2 = max(0.0, mad * mad - statistics.median(se * se for _, se in est))
    return {
        "points": len(est),
        "tau_dersimonian_laird": math.sqrt(tau2),
        "q": q,
        "tau_robust_mad": math.sqrt(robust2),
        "median_point_se": statistics.median(se for _, se in est),
        "log_ratios": [round(d, 4) for d in ds],
    }


def canary(folder):
    comp = collections.defaultdict(list)
    for line in open(f"{folder}/canary.jsonl"):
        c = json.loads(line)["canary"]
        for name in ("memcpy_gbit_s", "getpid_ns", "pipe_rr_same_cpu_us", "pipe_rr_cross_cpu_us"):
            if c.get(name):
                comp[name].append(math.log(c[name]))
    return comp


def canary_between(a, b):
    ca, cb = canary(a), canary(b)
    out = {}
    for name in ca:
        x, y = ca[name], cb.get(name, [])
        if len(x) < 2 or len(y) < 2:
            continue
        se = math.sqrt(statistics.variance(x) / len(x) + statistics.variance(y) / len(y))
        out[name] = {
            "round_log_sd": statistics.stdev(x + y),
            "log_ratio": statistics.fmean(y) - statistics.fmean(x),
            "se_from_rounds": se,
        }
    return out


def variant(name, a, b):
    pa, pb = visits(a), visits(b)
    within = [statistics.stdev(v) for v in point_logs(pa).values() if len(v) > 2]
    return {
        "variant": name,
        "headline": {s: pair_noise(p, "headline") for s, p in (("A", pa), ("B", pb))},
        "sender_cpu_per_byte": {s: pair_noise(p, "cpu") for s, p in (("A", pa), ("B", pb))},
        "visit_log_sd_median": statistics.median(within) if within else None,
        "between_sweeps": between(pa, pb),
        "canary_between_processes": canary_between(a, b),
    }


def main():
    args = sys.argv[1:]
    out_path = args.pop()
    variants = [variant(*args[i:i + 3]) for i in range(0, len(args), 3)]
    print(f"{'variant':<22} {'pair sd/round (A,B)':>22} {'rho pooled (A,B)':>18} {'cpu-pair sd':>14} {'visit sd':>9} {'tau DL':>7} {'tau rob':>8}")
    for v in variants:
        h, c, bt = v["headline"], v["sender_cpu_per_byte"], v["between_sweeps"]
        f = lambda x: "-" if x is None else f"{x:.3f}"
        print(f"{v['variant']:<22} {f(h['A']['round_log_ratio_sd_median']):>10},{f(h['B']['round_log_ratio_sd_median']):>10} "
              f"{f(h['A']['rho_pooled']):>8},{f(h['B']['rho_pooled']):>8} {f(c['A']['round_log_ratio_sd_median']):>14} "
              f"{f(v['visit_log_sd_median']):>9} {f(bt.get('tau_dersimonian_laird')):>7} {f(bt.get('tau_robust_mad')):>8}")
        for name, k in v["canary_between_processes"].items():
            print(f"  canary {name:<22} round sd {k['round_log_sd']:.3f}  B/A {math.exp(k['log_ratio']):.3f} (se from rounds {k['se_from_rounds']:.3f})")
    json.dump({"variants": variants}, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()

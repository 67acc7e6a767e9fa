#!/usr/bin/env python3
"""trace_summary.py TRACE.csv [--skip N] [--nodes N] [--against OTHER.csv]: what a recorded step
costs, kernel by kernel (with --against: per kernel kind, what each of two runs pays). A trace of
whole graph launches (RAD_CUDATRACE_GRAPHS=1) gives steps of one node: the span and the host's
gap between steps without the per-node tracing's cost to the launch.

Reads librad_cudatrace's CSV (tools/rad-cudatrace). Kernels replayed from one graph launch share
the launch's correlation id: each such group is a step. For every step, kernels are taken in start
order against a frontier (the latest end so far):
  idle     start - frontier when positive: the card ran nothing of this step (launch gaps, waits)
  early    frontier - start when positive: the kernel started before its predecessor ended
           (programmatic dependent launch: its blocks were resident during the predecessor's tail)
  exposed  end - max(frontier, start): what the kernel adds to the step's span
so per step, span = sum(idle) + sum(exposed). Between steps, the gap is the host's turnaround
(memcpys, the engine, the graph launch). Tables: steps, per kernel kind (name and grid size),
and the first --nodes kernels of a step."""
import csv
import sys
from collections import defaultdict


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def short(name, width=48):
    base = name.split("<")[0].split("::")[-1]
    tmpl = name[len(name.split("<")[0]):]
    s = base + (tmpl if len(tmpl) < 24 else tmpl[:21] + "..>") if tmpl else base
    return s[:width]


def load(path):
    kernels, copies = [], []
    with open(path) as f:
        for r in csv.DictReader(f):
            r["start"], r["end"] = int(r["start_ns"]), int(r["end_ns"])
            # a whole graph launch (RAD_CUDATRACE_GRAPHS=1) is a step of one node
            (kernels if r["kind"] in ("K", "G") else copies).append(r)
    return kernels, copies


def analyze(kernels, skip):
    """The most launched graph's steps (after the first `skip`), their spans, idle times, gaps to
    the next step and summed kernel time, and per node index its mean duration, idle, early and
    exposed time (ns)."""
    groups = defaultdict(list)
    for k in kernels:
        if k["graph_id"] != "0":
            groups[(k["graph_id"], k["correlation"])].append(k)
    if not groups:
        return None
    by_graph = defaultdict(list)
    for (g, c), ks in groups.items():
        by_graph[g].append(sorted(ks, key=lambda k: k["start"]))
    graph, steps = max(by_graph.items(), key=lambda kv: len(kv[1]))
    steps.sort(key=lambda ks: ks[0]["start"])
    steps = steps[skip:] if len(steps) > skip + 2 else steps
    n = len(steps)
    per_node = defaultdict(lambda: defaultdict(float))
    spans, idles, gaps, sums = [], [], [], []
    for si, ks in enumerate(steps):
        frontier = ks[0]["start"]
        idle = 0
        for i, k in enumerate(ks):
            st, en = k["start"], k["end"]
            d = per_node[i]
            d["name"] = k["name"]
            d["grid"] = k["grid"]
            d["dur"] += (en - st) / n
            d["idle"] += max(0, st - frontier) / n
            d["early"] += max(0, frontier - st) / n
            d["exposed"] += max(0, en - max(frontier, st)) / n
            idle += max(0, st - frontier)
            frontier = max(frontier, en)
        spans.append(frontier - ks[0]["start"])
        idles.append(idle)
        sums.append(sum(k["end"] - k["start"] for k in ks))
        if si + 1 < n:
            gaps.append(steps[si + 1][0]["start"] - frontier)
    return {"graph": graph, "steps": steps, "per_node": per_node, "spans": spans, "idles": idles, "gaps": gaps,
            "sums": sums}


def by_kind(per_node):
    """Per (kernel name, grid size): launches a step and their summed mean duration, idle, early
    and exposed time (ns)."""
    kinds = defaultdict(lambda: defaultdict(float))
    for i, d in per_node.items():
        kk = kinds[(d["name"], d["grid"])]
        kk["count"] += 1
        for f in ("dur", "idle", "early", "exposed"):
            kk[f] += d[f]
    return kinds


def compare(a, b):
    """Per kernel kind of either run: (exposed + idle before it) a step in a and in b (ns), the
    kinds both runs have first, the largest differences first."""
    ka, kb = by_kind(a["per_node"]), by_kind(b["per_node"])
    cost = lambda kk: kk["exposed"] + kk["idle"] if kk else 0.0
    rows = [(key, cost(ka.get(key)), cost(kb.get(key))) for key in set(ka) | set(kb)]
    return sorted(rows, key=lambda r: (not (r[0] in ka and r[0] in kb), -abs(r[2] - r[1])))


def print_comparison(a, b, path_a, path_b):
    print(f"A {path_a}: span {mean(a['spans']) / 1e3:.1f} us, gap {mean(a['gaps']) / 1e3:.1f} us")
    print(f"B {path_b}: span {mean(b['spans']) / 1e3:.1f} us, gap {mean(b['gaps']) / 1e3:.1f} us")
    print(f"{'kernel (exposed + idle a step)':50} {'grid':>6} {'A us':>9} {'B us':>9} {'B - A':>8}")
    for (name, grid), ca, cb in compare(a, b):
        print(f"{short(name):50} {grid:>6} {ca / 1e3:9.1f} {cb / 1e3:9.1f} {(cb - ca) / 1e3:8.1f}")


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    path, skip, nodes = args[0], 3, 24
    if "--skip" in args: skip = int(args[args.index("--skip") + 1])
    if "--nodes" in args: nodes = int(args[args.index("--nodes") + 1])
    kernels, copies = load(path)
    a = analyze(kernels, skip)
    if a is None:
        sys.exit("no kernels from graph launches in " + path)
    if "--against" in args:  # A/B: the same step traced under another setting
        other = args[args.index("--against") + 1]
        b = analyze(load(other)[0], skip)
        if b is None:
            sys.exit("no kernels from graph launches in " + other)
        print_comparison(a, b, path, other)
        return
    graph, steps, per_node = a["graph"], a["steps"], a["per_node"]
    spans, idles, gaps, sums = a["spans"], a["idles"], a["gaps"], a["sums"]
    n = len(steps)
    us = lambda ns: ns / 1e3
    print(f"graph {graph}: {n} steps (first {skip} left out), {len(steps[0])} kernels a step")
    print(f"  span {us(mean(spans)):9.1f} us   idle inside {us(mean(idles)):7.1f} us   kernel time summed {us(mean(sums)):9.1f} us")
    print(f"  gap to the next step {us(mean(gaps)):7.1f} us (min {us(min(gaps)) if gaps else 0:.1f}, max {us(max(gaps)) if gaps else 0:.1f})"
          f"   step period {us(mean(spans) + mean(gaps)):9.1f} us -> {1e9 / (mean(spans) + mean(gaps)):.1f} steps/s")
    # copies between steps
    if copies and n > 1:
        lo, hi = steps[0][0]["start"], steps[-1][-1]["end"]
        inside = [c for c in copies if lo <= c["start"] <= hi]
        kinds = defaultdict(lambda: [0, 0])
        for c in inside:
            kinds[c["name"]][0] += 1
            kinds[c["name"]][1] += c["end"] - c["start"]
        for name, (cnt, t) in sorted(kinds.items()):
            print(f"  {name}: {cnt / n:.1f} a step, {us(t / max(cnt, 1)):.1f} us each")
    kinds = by_kind(per_node)
    print(f"\n{'kernel (per step, summed over its launches)':50} {'grid':>6} {'n':>4} {'dur us':>9} {'idle us':>8} {'early us':>8} {'exposed us':>10}")
    for (name, grid), kk in sorted(kinds.items(), key=lambda kv: -(kv[1]["exposed"] + kv[1]["idle"])):
        print(f"{short(name):50} {grid:>6} {int(kk['count']):>4} {us(kk['dur']):9.1f} {us(kk['idle']):8.1f} {us(kk['early']):8.1f} {us(kk['exposed']):10.1f}")
    print(f"\nfirst {nodes} kernels of a step (mean over steps)")
    print(f"{'#':>3} {'kernel':50} {'grid':>6} {'dur us':>7} {'idle':>6} {'early':>6} {'exposed':>7}")
    for i in range(min(nodes, len(per_node))):
        d = per_node[i]
        print(f"{i:>3} {short(d['name']):50} {d['grid']:>6} {us(d['dur']):7.2f} {us(d['idle']):6.2f} {us(d['early']):6.2f} {us(d['exposed']):7.2f}")
    last = len(per_node)
    print("last kernels of a step")
    for i in range(max(nodes, last - 4), last):
        d = per_node[i]
        print(f"{i:>3} {short(d['name']):50} {d['grid']:>6} {us(d['dur']):7.2f} {us(d['idle']):6.2f} {us(d['early']):6.2f} {us(d['exposed']):7.2f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""bench/gpu/trace_summary.py's arithmetic on a timeline worked out by hand.

Three graph launches (correlation 10, 11, 12) of three kernels each, plus one kernel outside any
graph. Step 11 (times in ns from its start at 100,000):
  A [0, 1000)        exposed 1000
  B [800, 2000)      starts 200 before A ends: early 200, exposed 1000
  C [2500, 3000)     idle 500 before it, exposed 500
so its span is 3000 = idle 500 + exposed 2500, and step 12 starts 7000 after it ends."""
import csv
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench", "gpu"))
import trace_summary  # noqa: E402


def kernel(name, start, end, corr, graph="7"):
    return {"kind": "K", "name": name, "start": start, "end": end, "graph_id": graph, "correlation": str(corr), "grid": 1}


def main():
    ks = []
    for corr, base in ((10, 0), (11, 100_000), (12, 110_000)):
        ks += [kernel("A", base, base + 1000, corr), kernel("B", base + 800, base + 2000, corr),
               kernel("C", base + 2500, base + 3000, corr)]
    ks.append(kernel("argmax", 103_500, 104_000, 99, graph="0"))
    a = trace_summary.analyze(ks, skip=0)
    failures = []

    def expect(what, got, want):
        if abs(got - want) > 1e-9:
            failures.append(f"{what}: got {got}, want {want}")

    expect("steps", len(a["steps"]), 3)
    expect("span", a["spans"][1], 3000)
    expect("idle inside", a["idles"][1], 500)
    expect("gap to the next step", a["gaps"][1], 7000)
    expect("gap after step 10", a["gaps"][0], 97_000)
    node = a["per_node"]
    expect("B early", node[1]["early"], 200)
    expect("B exposed", node[1]["exposed"], 1000)
    expect("C idle", node[2]["idle"], 500)
    expect("C exposed", node[2]["exposed"], 500)
    expect("span = idle + exposed", a["spans"][1], a["idles"][1] + sum(node[i]["exposed"] for i in range(3)))
    expect("summed kernel time", a["sums"][1], 1000 + 1200 + 500)
    # compare(): the same steps with kernel C 400 ns longer in run b
    kb_ = [dict(k) for k in ks]
    for k in kb_:
        if k["name"] == "C":
            k["end"] += 400
    rows = {key[0]: (ca, cb) for key, ca, cb in trace_summary.compare(a, trace_summary.analyze(kb_, skip=0))}
    expect("compare: C in a", rows["C"][0], 1000)  # exposed 500 + idle 500
    expect("compare: C in b", rows["C"][1], 1400)
    expect("compare: A unchanged", rows["A"][1] - rows["A"][0], 0)
    # whole graph launches (RAD_CUDATRACE_GRAPHS=1): each one a step of one node
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        w = csv.writer(f)
        w.writerow(["kind", "name", "start_ns", "end_ns", "stream", "graph_id", "graph_node", "correlation", "grid", "block", "smem"])
        for corr, (st, en) in enumerate(((0, 4000), (4500, 8500), (9100, 13100))):
            w.writerow(["G", "(whole graph)", st, en, 7, 3, 0, corr, 0, 0, 0])
        w.writerow(["M", "memcpy device to host", 4100, 4200, 7, 0, 0, 50, 4, 0, 0])
        path = f.name
    kernels, copies = trace_summary.load(path)
    os.unlink(path)
    g = trace_summary.analyze(kernels, skip=0)
    expect("graph steps", len(g["steps"]), 3)
    expect("graph span", g["spans"][0], 4000)
    expect("graph gaps", g["gaps"][0] + g["gaps"][1], 500 + 600)
    expect("copies apart", len(copies), 1)
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("trace_summary: all checks passed")


if __name__ == "__main__":
    main()

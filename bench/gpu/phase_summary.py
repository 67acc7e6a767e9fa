#!/usr/bin/env python3
"""phase_summary.py FILE: where the time of batch-1 decode's attention chain goes, from the phase
stamps of a measuring libgpu (cmake -DRADIANCE_GPU_PHASES=ON, RADIANCE_GPU_PHASES_OUT=FILE;
plugins/kernels/gpu/k_phase.h).

Every layer of a recorded step is one chain: the qkv gemv (with its norm), the decode attention,
k_merge where the context was split, the output projection. Times are in us from the moment the
qkv gemv's last block ended, averaged over every such chain the file holds (the last replay of
each recorded graph). Phases: gemv 0 entry, 1 past the wait, 2 end; attention 0 entry, 1 past
the wait, 2 q (and rope) in shared memory, 3 keys done, 4 end (5: the end of the states' merge
run a second time, from a warm instruction cache); merge 0 entry, 1 past the wait,
2 partials in, 3 end.
"""
import statistics
import sys

# Launch kinds (k_phase.h's PhaseKind): 1 gemv with its norm (qkv), 2 gemv_add (the output
# projection), 3 decode attention, 4 k_merge.


def read(path):
    launches = []
    with open(path) as f:
        cur = None
        for line in f:
            if line.startswith("L "):
                _, kind, blocks, phases, captured = line.split()
                cur = {"kind": int(kind), "captured": captured == "1", "rows": []}
                launches.append(cur)
            elif cur is not None and line.strip():
                cur["rows"].append([int(v) for v in line.split()])
    return launches


def column(rows, k):
    return [r[k] for r in rows if len(r) > k and r[k] > 0]


def main():
    launches = [l for l in read(sys.argv[1]) if l["captured"]]
    stats = {}
    blocks = {}
    chains = 0
    resolution = set()

    def put(name, value):
        stats.setdefault(name, []).append(value)

    for i, l in enumerate(launches):
        if l["kind"] != 3:
            continue
        qkv = next((launches[j] for j in range(i - 1, -1, -1) if launches[j]["kind"] == 1), None)
        nxt = [launches[j] for j in range(i + 1, min(i + 3, len(launches)))]
        merge = nxt[0] if nxt and nxt[0]["kind"] == 4 else None
        oproj = next((n for n in nxt if n["kind"] == 2), None)
        if qkv is None or oproj is None:
            continue
        q_end = column(qkv["rows"], 2)
        if not q_end:
            continue
        t0 = max(q_end)
        a = l["rows"]
        for r in a:  # each block's own stretches between stamps
            for k, what in ((1, "entry to past the wait"), (2, "wait to q in shared memory"), (3, "q to keys done"),
                            (4, "keys done to end"), (5, "end to a second pass's end")):
                if len(r) > k and r[k] > 0 and r[k - 1] > 0:
                    blocks.setdefault(what, []).append((r[k] - r[k - 1]) / 1000.0)
        starts = column(a, 0)
        if not starts or abs(min(starts) - t0) > 100000:  # another replay's stamps
            continue
        chains += 1
        us = lambda v: (v - t0) / 1000.0
        resolution.update(v % 1000 for v in starts[:8])
        put("qkv: last block's start", us(max(column(qkv["rows"], 0))))
        put("qkv: first block's end", us(min(q_end)))
        put("attention: first block's entry", us(min(starts)))
        put("attention: last block's entry", us(max(starts)))
        for k, what in ((1, "past the wait"), (2, "q in shared memory"), (3, "keys done"), (4, "end"), (5, "end of a second pass")):
            c = column(a, k)
            if c:
                put(f"attention: {what}, first", us(min(c)))
                put(f"attention: {what}, median", us(statistics.median(c)))
                put(f"attention: {what}, last", us(max(c)))
        if merge:
            m = merge["rows"]
            put("merge: first block's entry", us(min(column(m, 0))))
            for k, what in ((1, "past the wait"), (2, "partials in"), (3, "end")):
                c = column(m, k)
                if c:
                    put(f"merge: {what}, first", us(min(c)))
                    put(f"merge: {what}, last", us(max(c)))
        o = oproj["rows"]
        put("o-proj: first block's entry", us(min(column(o, 0))))
        put("o-proj: median block's entry", us(statistics.median(column(o, 0))))
        c = column(o, 1)
        put("o-proj: past the wait, first", us(min(c)))
        put("o-proj: past the wait, median", us(statistics.median(c)))
        put("o-proj: end, last", us(max(column(o, 2))))
    print(f"chains: {chains} (captured launches: {len(launches)}); us from the qkv gemv's last block's end")
    for name, vals in blocks.items():
        vals.sort()
        print(f"  per block, {name:35s} median {statistics.median(vals):6.2f} us (p10 {vals[len(vals) // 10]:6.2f}, p90 {vals[9 * len(vals) // 10]:6.2f})")
    if resolution:
        print(f"clock: low digits of the first stamps (ns mod 1000): {sorted(resolution)[:8]}")
    for name, vals in stats.items():
        print(f"  {name:44s} {statistics.mean(vals):8.2f}  (min {min(vals):8.2f}, max {max(vals):8.2f})")


if __name__ == "__main__":
    main()

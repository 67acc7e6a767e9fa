#!/usr/bin/env python3
"""ncu_summary.py CSV: sum Nsight Compute's gpu__time_duration per kernel name (one decode step's
worth when the capture covers one step), largest first."""
import collections
import csv
import sys

rows = list(csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')))
if not rows:
    sys.exit("no ncu rows (see ncu.err)")
head = rows[0]
ki, mi, vi = head.index("Kernel Name"), head.index("Metric Name"), head.index("Metric Value")
ui = head.index("Metric Unit") if "Metric Unit" in head else -1
scale = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9}
tot, cnt = collections.Counter(), collections.Counter()
for r in rows[1:]:
    if r[mi] != "gpu__time_duration.sum":
        continue
    name = r[ki].split("(")[0].replace("void ", "")[:70]
    tot[name] += float(r[vi].replace(",", "")) * (scale.get(r[ui], 1.0) if ui >= 0 else 1.0)
    cnt[name] += 1
all_ns = sum(tot.values())
print(f"{'kernel':<72} {'launches':>8} {'us total':>10} {'us each':>9} {'share':>6}")
for k, v in tot.most_common():
    print(f"{k:<72} {cnt[k]:>8} {v / 1e3:>10.1f} {v / 1e3 / cnt[k]:>9.2f} {100 * v / all_ns:>5.1f}%")
print(f"{'all':<72} {sum(cnt.values()):>8} {all_ns / 1e3:>10.1f}")

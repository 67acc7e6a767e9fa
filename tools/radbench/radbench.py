#!/usr/bin/env python3
"""radbench: load against a running OpenAI-compatible server (radiance, vLLM, llama-server).

N concurrent clients each send streaming /v1/completions requests with a prompt of about
--prompt-tokens tokens and --output-tokens generated tokens (ignore_eos-like: a fixed max_tokens,
temperature 0), for --requests requests in all. Reports TTFT and inter-token latency percentiles,
request latency and throughput as a table.

  tools/radbench/radbench.py --url http://127.0.0.1:8080 --concurrency 8 --requests 64 \
      --prompt-tokens 128 --output-tokens 128
"""
import argparse
import http.client
import json
import statistics
import threading
import time
import urllib.parse

WORDS = ("whale sea ship captain harpoon deck mast sail crew ocean wind storm night morning island "
         "boat line rope oil bone ivory sailor voyage pequod ahab ishmael queequeg starbuck").split()


def prompt_of(n_words, i):
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n_words))


def one_request(url, prompt, max_tokens, out):
    u = urllib.parse.urlparse(url)
    c = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=600)
    body = json.dumps({"prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "stream": True})
    t0 = time.perf_counter()
    c.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        out.append({"error": f"HTTP {r.status}"})
        return
    stamps = []
    for raw in r:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[6:])
        if any(ch.get("text") for ch in chunk.get("choices", [])):
            stamps.append(time.perf_counter())
    c.close()
    if not stamps:
        out.append({"error": "no tokens"})
        return
    out.append({"ttft": stamps[0] - t0, "itl": [b - a for a, b in zip(stamps, stamps[1:])],
                "latency": stamps[-1] - t0, "chunks": len(stamps)})


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--prompt-tokens", type=int, default=64, help="about this many prompt tokens (words)")
    ap.add_argument("--output-tokens", type=int, default=64)
    a = ap.parse_args()
    results, lock, next_i = [], threading.Lock(), [0]

    def client():
        while True:
            with lock:
                i = next_i[0]
                if i >= a.requests:
                    return
                next_i[0] += 1
            one_request(a.url, prompt_of(a.prompt_tokens, i), a.output_tokens, results)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(a.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    ok = [r for r in results if "error" not in r]
    ttft = [r["ttft"] * 1000 for r in ok]
    itl = [x * 1000 for r in ok for x in r["itl"]]
    lat = [r["latency"] for r in ok]
    gen = sum(r["chunks"] for r in ok)
    print(f"{'concurrency':>11} {'requests':>8} {'errors':>6} {'ttft_p50_ms':>11} {'ttft_p99_ms':>11} "
          f"{'itl_p50_ms':>10} {'itl_p99_ms':>10} {'lat_p50_s':>9} {'out_tok/s':>9} {'req/s':>7}")
    print(f"{a.concurrency:>11} {len(results):>8} {len(results) - len(ok):>6} {pct(ttft, 50):>11.1f} {pct(ttft, 99):>11.1f} "
          f"{pct(itl, 50):>10.2f} {pct(itl, 99):>10.2f} {statistics.median(lat) if lat else float('nan'):>9.2f} "
          f"{gen / wall:>9.1f} {len(ok) / wall:>7.2f}")


if __name__ == "__main__":
    main()

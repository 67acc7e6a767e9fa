#!/usr/bin/env python3
"""radbench: load against a running OpenAI-compatible server (radiance, vLLM, llama-server).

N concurrent clients each send streaming /v1/completions requests with a prompt of about
--prompt-tokens tokens and --output-tokens generated tokens (ignore_eos-like: a fixed max_tokens;
greedy unless --temperature / --top-p ask for sampling, each request with its own seed), for
--requests requests in all. Reports TTFT and inter-token latency percentiles,
request latency and throughput as a table, and the server's steps/s when it exposes radiance's
/metrics.

  tools/radbench/radbench.py --url http://127.0.0.1:8080 --concurrency 8 --requests 64 \\
      --prompt-tokens 128 --output-tokens 128

Prefix-caching workloads:
  --shared-prefix N  every request starts with the same N-token system prompt (the same N words, or
                     N token ids with --token-prompts), then its own --prompt-tokens tokens;
  --multi-turn K     conversations of K turns: each turn resends the whole conversation so far (its
                     earlier prompts and answers) and --prompt-tokens new tokens; the table adds the
                     TTFT p50 of each turn, which should grow with the new tokens only.
With radiance's /metrics the table adds the prefix cache's hit rate over the run (hit%).

The clients are asyncio streams spread over --processes processes: one Python thread per stream
(as this tool once had) spends ~150 us of CPU per streamed chunk under the GIL, which capped what
it could measure at a few thousand chunks/s whatever the server did.
"""
import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import time
import urllib.parse
import urllib.request

WORDS = ("whale sea ship captain harpoon deck mast sail crew ocean wind storm night morning island "
         "boat line rope oil bone ivory sailor voyage pequod ahab ishmael queequeg starbuck").split()


def prompt_of(n, i, token_ids=False):
    """Prompt i: n words, or exactly n token ids (below 1100: valid in any vocabulary we serve)."""
    if token_ids:
        return [100 + (i * 7 + k * 3) % 1000 for k in range(n)]
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n))


def shared_prefix(n, token_ids=False):
    """The system prompt every request of --shared-prefix starts with (a pattern no prompt_of makes)."""
    if token_ids:
        return [100 + (k * 13 + 5) % 1000 for k in range(n)]
    return " ".join(WORDS[(k * 5 + 1) % len(WORDS)] for k in range(n))


def join(a, b):
    """Two prompt pieces, words or token ids, one after the other."""
    if isinstance(a, list):
        return a + b
    return f"{a} {b}" if a and b else a or b


async def read_chunked(reader):
    """Yields (bytes, arrival time) of each read of a chunked body; ends at the last chunk."""
    while True:
        size_line = await reader.readline()
        if not size_line:
            return
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            return
        data = await reader.readexactly(size + 2)
        yield data[:-2], time.perf_counter()


async def one_request(host, port, body, out):
    t0 = time.perf_counter()
    try:
        reader, writer = await asyncio.open_connection(host, port)
    except OSError as e:
        out.append({"error": str(e)})
        return
    payload = json.dumps(body).encode()
    writer.write(b"POST /v1/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\nConnection: close\r\n\r\n" % (host.encode(), len(payload)) + payload)
    status = await reader.readline()
    chunked = False
    while True:
        h = await reader.readline()
        if h in (b"\r\n", b""):
            break
        if h.lower().startswith(b"transfer-encoding:") and b"chunked" in h.lower():
            chunked = True
    if b" 200 " not in status:
        out.append({"error": status.decode(errors="replace").strip()})
        writer.close()
        return
    stamps, pending, text, ids = [], b"", [], []

    async def reads():
        if chunked:
            async for d in read_chunked(reader):
                yield d
        else:
            while d := await reader.read(65536):
                yield d, time.perf_counter()

    async for data, t in reads():
        pending += data
        *events, pending = pending.split(b"\n\n")
        for ev in events:
            for line in ev.split(b"\n"):
                if line.startswith(b"data: ") and line != b"data: [DONE]":
                    chunk = json.loads(line[6:])
                    for ch in chunk.get("choices", []):
                        text.append(ch.get("text") or "")
                        ids.extend(ch.get("token_ids") or [])
                    if any(ch.get("text") for ch in chunk.get("choices", [])):
                        stamps.append(t)
    writer.close()
    if not stamps:
        out.append({"error": "no tokens"})
        return
    out.append({"ttft": stamps[0] - t0, "itl": [b - a for a, b in zip(stamps, stamps[1:])],
                "latency": stamps[-1] - t0, "chunks": len(stamps), "text": "".join(text), "ids": ids})


def run_process(args):
    """One process: `clients` streams over the request indices [first, first + count)."""
    url, clients, first, count, a = args
    u = urllib.parse.urlparse(url)
    out = []

    turns = a["multi_turn"]
    tokens = a["token_prompts"]
    system = shared_prefix(a["shared_prefix"], tokens) if a["shared_prefix"] else ([] if tokens else "")

    async def main():
        nxt = [first]

        async def client():
            # Request i is turn i % turns of conversation i // turns: a client runs a conversation's
            # turns in order, each resending the conversation so far.
            while nxt[0] < first + count:
                i = nxt[0]
                nxt[0] += min(turns, first + count - i)
                history = system
                for turn in range(min(turns, first + count - i)):
                    prompt = join(history, prompt_of(a["prompt_tokens"], i + turn, tokens))
                    body = {"prompt": prompt, "max_tokens": a["output_tokens"], "temperature": a["temperature"], "stream": True}
                    if a["temperature"] > 0:
                        body.update({"top_p": a["top_p"], "seed": i + turn})
                    if tokens and turns > 1:
                        body["return_token_ids"] = True
                    await one_request(u.hostname, u.port or 80, body, out)
                    out[-1]["turn"] = turn
                    answer = out[-1].get("ids" if tokens else "text") or ([] if tokens else "")
                    history = join(prompt, answer)

        await asyncio.gather(*(client() for _ in range(clients)))

    asyncio.run(main())
    return out


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def server_counters(url):
    """radiance's step and prefix-cache counters ({} for servers without them)."""
    names = {"radiance:step_duration_seconds_count": "steps", "radiance:prefix_cache_queries_total": "queries",
             "radiance:prefix_cache_hits_total": "hits"}
    out = {}
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/metrics", timeout=5) as r:
            for line in r.read().decode().splitlines():
                name = line.split("{")[0].split(" ")[0]
                if name in names:
                    out[names[name]] = float(line.split()[-1])
    except OSError:
        pass
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--prompt-tokens", type=int, default=64, help="about this many prompt tokens (words)")
    ap.add_argument("--token-prompts", action="store_true", help="send prompts as exactly --prompt-tokens token ids")
    ap.add_argument("--output-tokens", type=int, default=64)
    ap.add_argument("--shared-prefix", type=int, default=0, metavar="N",
                    help="every request starts with the same N-token system prompt, then its own tokens")
    ap.add_argument("--multi-turn", type=int, default=1, metavar="K",
                    help="conversations of K turns, each turn resending the conversation so far")
    ap.add_argument("--temperature", type=float, default=0.0, help="0: greedy (the default)")
    ap.add_argument("--top-p", type=float, default=1.0)
    ap.add_argument("--processes", type=int, default=0, help="client processes (default: one per 64 streams, at most the CPUs)")
    ap.add_argument("--no-header", action="store_true", help="print the row only (for tables of several runs)")
    a = ap.parse_args()
    if a.shared_prefix < 0:
        ap.error("--shared-prefix must be 0 or more")
    if a.multi_turn < 1:
        ap.error("--multi-turn must be 1 or more")
    procs = a.processes or max(1, min(os.cpu_count() or 1, (a.concurrency + 63) // 64))
    procs = min(procs, a.concurrency)
    opts = {"prompt_tokens": a.prompt_tokens, "token_prompts": a.token_prompts, "output_tokens": a.output_tokens,
            "temperature": a.temperature, "top_p": a.top_p, "shared_prefix": a.shared_prefix, "multi_turn": a.multi_turn}
    jobs, first = [], 0
    # Whole conversations to each process (a conversation's turns run in order on one client).
    conversations = (a.requests + a.multi_turn - 1) // a.multi_turn
    for p in range(procs):
        count = (conversations // procs + (p < conversations % procs)) * a.multi_turn
        count = max(0, min(count, a.requests - first))
        clients = a.concurrency // procs + (p < a.concurrency % procs)
        jobs.append((a.url, clients, first, count, opts))
        first += count
    c0 = server_counters(a.url)
    t0 = time.perf_counter()
    with multiprocessing.Pool(procs) as pool:
        results = [r for part in pool.map(run_process, jobs) for r in part]
    wall = time.perf_counter() - t0
    c1 = server_counters(a.url)
    ok = [r for r in results if "error" not in r]
    ttft = [r["ttft"] * 1000 for r in ok]
    itl = [x * 1000 for r in ok for x in r["itl"]]
    lat = [r["latency"] for r in ok]
    gen = sum(r["chunks"] for r in ok)
    delta = lambda k: c1[k] - c0[k] if k in c0 and k in c1 else None
    steps = f"{delta('steps') / wall:.1f}" if delta("steps") is not None else "-"
    hit = f"{100 * delta('hits') / delta('queries'):.1f}" if delta("queries") else "-"
    if not a.no_header:
        print(f"{'concurrency':>11} {'requests':>8} {'errors':>6} {'steps/s':>7} {'ttft_p50_ms':>11} {'ttft_p99_ms':>11} "
              f"{'itl_p50_ms':>10} {'itl_p99_ms':>10} {'lat_p50_s':>9} {'out_tok/s':>9} {'req/s':>7} {'hit%':>5}")
    print(f"{a.concurrency:>11} {len(results):>8} {len(results) - len(ok):>6} {steps:>7} {pct(ttft, 50):>11.1f} "
          f"{pct(ttft, 99):>11.1f} {pct(itl, 50):>10.2f} {pct(itl, 99):>10.2f} "
          f"{statistics.median(lat) if lat else float('nan'):>9.2f} {gen / wall:>9.1f} {len(ok) / wall:>7.2f} {hit:>5}")
    if a.multi_turn > 1:
        by_turn = [pct([r["ttft"] * 1000 for r in ok if r.get("turn") == t], 50) for t in range(a.multi_turn)]
        print("ttft_p50_ms by turn: " + " ".join(f"{x:.1f}" for x in by_turn))
    errors = sorted({r["error"] for r in results if "error" in r})
    if errors:
        print("errors:", "; ".join(errors[:5]))


if __name__ == "__main__":
    main()

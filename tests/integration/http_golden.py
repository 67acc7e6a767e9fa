#!/usr/bin/env python3
"""Over HTTP, against transformers: a served golden fixture answers greedy /v1/completions with
token-id prompts with exactly promptN.greedy, one at a time and with 16 concurrent requests of
different lengths; `n` > 1 gives n identical greedy choices; a stream closed mid-way frees its KV
blocks (seen in /props).

usage: http_golden.py RADIANCE_BIN FIXTURE_DIR TOKENIZER_DIR
"""
import http.client
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time


def golden(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__" or t["dtype"] != "I32":
            continue
        a, b = t["data_offsets"]
        out[name] = list(struct.unpack(f"<{(b - a) // 4}i", data[a:b]))
    return [(out[f"prompt{i}.ids"], out[f"prompt{i}.greedy"]) for i in range(len(out)) if f"prompt{i}.ids" in out]


def post(port, path, body, timeout=120):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    out = r.status, json.loads(r.read() or b"null")
    c.close()
    return out


def get(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", path)
    r = c.getresponse()
    out = r.status, r.read().decode()
    c.close()
    return out


def model_dir(fixture, tokdir, work):
    """A servable folder in `work`: the fixture's config and weights with a tokenizer beside them.
    Any tokenizer whose vocabulary covers the fixture's 512 ids serves: the tests compare ids."""
    model = os.path.join(work, os.path.basename(fixture.rstrip("/")))
    os.makedirs(model)
    for f in ("config.json", "model.safetensors"):
        shutil.copy(os.path.join(fixture, f), model)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(tokdir, f), model)
    return model


def main():
    radiance, fixture, tokdir = sys.argv[1:4]
    work = tempfile.mkdtemp(prefix="radiance-http-golden-")
    model = model_dir(fixture, tokdir, work)
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    server = subprocess.Popen([radiance, "serve", "--model", model, "--port", str(port), "--cache-dir", work,
                               "--max-seqs", "16", "--max-ctx", "512", "--kv-blocks", "64"],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "serve.log"), "w"))
    passed, failed = 0, 0

    def check(ok, what):
        nonlocal passed, failed
        print(("PASS " if ok else "FAIL ") + what)
        if ok:
            passed += 1
        else:
            failed += 1

    try:
        for _ in range(300):
            try:
                if get(port, "/ready")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        cases = golden(os.path.join(fixture, "golden.safetensors"))
        body = lambda ids, k: {"prompt": ids, "max_tokens": k, "temperature": 0, "return_token_ids": True}
        for i, (ids, want) in enumerate(cases):
            st, r = post(port, "/v1/completions", body(ids, len(want)))
            got = r["choices"][0].get("token_ids") if st == 200 else r
            check(got == want, f"prompt{i} alone: {len(want)} greedy tokens")
            check(r.get("prompt_token_ids") == ids, f"prompt{i}: prompt_token_ids echoed")
        # 16 concurrent requests of different prompts and lengths.
        results = [None] * 16
        def one(j):
            ids, want = cases[j % len(cases)]
            k = 4 + (j * 5) % 21
            results[j] = (post(port, "/v1/completions", body(ids, k)), want[:k])
        threads = [threading.Thread(target=one, args=(j,)) for j in range(16)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        ok = all(st == 200 and r["choices"][0]["token_ids"] == want for (st, r), want in results)
        check(ok, "16 concurrent requests: every one equals transformers' greedy tokens")
        st, r = post(port, "/v1/completions", {**body(cases[0][0], 8), "n": 3})
        check(st == 200 and len(r["choices"]) == 3 and all(c["token_ids"] == cases[0][1][:8] for c in r["choices"]),
              "n = 3 greedy choices, all equal to the reference")
        # A stream closed after a few chunks frees its blocks.
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        # (the longest prompt, asking for more tokens than a few chunks but within --max-ctx)
        longest = max(cases, key=lambda c: len(c[0]))[0]
        c.request("POST", "/v1/completions", json.dumps({**body(longest, min(400, 500 - len(longest))), "stream": True}),
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        chunks = 0
        for raw in r:
            if raw.startswith(b"data: "):
                chunks += 1
            if chunks >= 3:
                break
        in_use = json.loads(get(port, "/props")[1])
        c.close()
        freed = False
        for _ in range(100):
            props = json.loads(get(port, "/props")[1])
            if _kv_used(props) == 0:
                freed = True
                break
            time.sleep(0.05)
        check(_kv_used(in_use) > 0 and freed, "closing a stream mid-way frees its KV blocks (/props)")
    finally:
        server.terminate()
        server.wait(60)
        shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


def _kv_used(props):
    """kv_blocks_used wherever /props reports the service's stats."""
    stack = [props]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if "kv_blocks_used" in x:
                return x["kv_blocks_used"]
            stack.extend(x.values())
    return -1


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""POST /v1/embeddings end to end on the demo model, served by `radiance serve --embeddings` on CPU
workers with small steps (--max-batch-tokens 24, so longer inputs are prefilled in chunks):

- the vector is unit-norm and as wide as the model's hidden size;
- equal (1e-5) whether the text is sent alone, in a batch of inputs, or beside generation
  requests in the same steps, and whether sent as text or as its token ids;
- dimensions truncates and normalises again (equal to the full vector's head, renormalised);
- base64 decodes to the float answer;
- generation beside embeddings gives the greedy text it gives alone;
- bad input is a 400 naming the field.

The independent reference (the pooled row is the head's input: W h gives the logits) is
tests/integration/test_embedding_engine.cpp's; transformers' is checked by embeddings_reference.py.

usage: embeddings_http.py RADIANCE_BIN MODEL_DIR

Mutation seen failing (the C++ rebuilt, 2026-12-07): embedding_vectors.cpp normalising before it
truncates: "dimensions truncates and renormalises" (16 passed, 1 failed).
"""
import base64
import concurrent.futures
import http.client
import json
import math
import os
import shutil
import struct
import sys
import tempfile

from radserve import Server

passed, failed = 0, 0


def check(ok, what):
    global passed, failed
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    passed, failed = passed + bool(ok), failed + (not ok)


def request(port, path, body, timeout=120):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        return r.status, json.loads(data) if data else None
    finally:
        c.close()


def embed(port, inp, **kw):
    st, j = request(port, "/v1/embeddings", dict(input=inp, **kw))
    assert st == 200, (st, j)
    return [d["embedding"] for d in j["data"]], j


def norm(v):
    return math.sqrt(sum(x * x for x in v))


def close(a, b, tol=1e-5):
    return len(a) == len(b) and max(abs(x - y) for x, y in zip(a, b)) <= tol


TEXT = "Call me Ishmael. Some years ago, never mind how long precisely, having little or no money in my purse."
OTHERS = ["The whale!", "It was the Pequod, a ship of the old school, rather small if anything; with an old-fashioned claw-footed look."]


def run(port, hidden):
    pool = concurrent.futures.ThreadPoolExecutor(8)
    [v], j = embed(port, TEXT)
    check(len(v) == hidden and abs(norm(v) - 1) < 1e-5, f"one vector of {hidden}, unit-norm ({len(v)}, {norm(v)})")
    st, t = request(port, "/tokenize", {"content": TEXT, "add_special": True})
    ids = t["tokens"]
    check(len(ids) > 24, f"the text is longer than a step's tokens ({len(ids)}): prefilled in chunks")
    check(j["usage"]["prompt_tokens"] == len(ids) and j["usage"]["total_tokens"] == len(ids) and j["model"],
          f"usage counts the tokens ({j['usage']}), model named")

    vs, _ = embed(port, [OTHERS[0], TEXT, OTHERS[1]])
    check(close(vs[1], v), "equal alone and in a batch of inputs")
    [vi], _ = embed(port, ids)
    check(close(vi, v), "equal as text and as its token ids")
    vv, _ = embed(port, [ids, ids[:5]])
    check(close(vv[0], v), "equal as one of an array of token-id arrays")

    # beside generation requests, in the same steps; and generation is unchanged by them
    gen = {"prompt": "Call me Ishmael.", "max_tokens": 24, "temperature": 0}
    st, alone = request(port, "/v1/completions", gen)
    futs = [pool.submit(request, port, "/v1/completions", gen) for _ in range(3)]
    efuts = [pool.submit(embed, port, TEXT) for _ in range(4)]
    gens = [f.result() for f in futs]
    embs = [f.result()[0][0] for f in efuts]
    check(all(close(e, v) for e in embs), "equal beside generation requests")
    check(all(g[0] == 200 and g[1]["choices"][0]["text"] == alone["choices"][0]["text"] for g in gens),
          "generation beside embeddings gives its text alone")

    [d], _ = embed(port, TEXT, dimensions=64)
    head = v[:64]
    n = norm(head)
    check(len(d) == 64 and abs(norm(d) - 1) < 1e-5 and close(d, [x / n for x in head]), "dimensions truncates and renormalises")
    [b], _ = embed(port, TEXT, encoding_format="base64")
    raw = base64.b64decode(b)
    dec = list(struct.unpack("<%df" % (len(raw) // 4), raw))
    check(dec == [struct.unpack("<f", struct.pack("<f", x))[0] for x in v], "base64 decodes to the float answer")

    for body, param, what in [({"input": ""}, "input", "an empty input"),
                              ({"input": []}, "input", "an empty array"),
                              ({"input": [1, 10 ** 6]}, "input", "a token id out of range"),
                              ({"input": [[1, 2], [1, 10 ** 6]]}, "input[1]", "a token id out of range in the second input"),
                              ({"input": [5] * 1100}, "input", "an input longer than the context (1024)"),
                              ({"input": "x", "dimensions": hidden + 1}, "dimensions", "dimensions above the hidden size"),
                              ({"input": "x", "encoding_format": "int8"}, "encoding_format", "an unknown encoding")]:
        st, j = request(port, "/v1/embeddings", body)
        check(st == 400 and j["error"]["param"] == param and ("context" in j["error"]["message"] or "context" not in what),
              f"{what}: 400 naming {param} ({st} {j})")


def main():
    radiance, model = sys.argv[1], sys.argv[2]
    hidden = json.load(open(os.path.join(model, "config.json")))["hidden_size"]
    work = tempfile.mkdtemp(prefix="radiance-embeddings-")
    server = Server(radiance, model, work, ["--embeddings", "--max-batch-tokens", "24", "--max-ctx", "1024"])
    try:
        run(server.port, hidden)
    finally:
        server.stop(show_log=failed > 0)
        shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

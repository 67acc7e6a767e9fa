#!/usr/bin/env python3
"""Over HTTP, sampling on a card equals sampling on the host: the same golden fixture served twice
on libfakedev's pretend card, once drawing every non-greedy row on the host from its logits
(RADIANCE_SAMPLE_ON_HOST=1) and once as served by default, where rows that ask for nothing but
temperature, top_k, top_p, min_p and a seed are drawn by the card's `sample` op and rows with
penalties or logprobs come back to the host sampler. Same plan, same logits, so the tokens must be
equal (a host plan would not do: its cache is f32 where the card's is bf16, and a draw near a
boundary may then differ). Requests with different settings run concurrently, so one step
carries rows of every kind; the sampled ones must also differ from greedy decoding.

usage: sampling_matches_host.py RADIANCE_BIN FIXTURE_DIR TOKENIZER_DIR HOMES
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from http_golden import get, golden, model_dir, post  # noqa: E402

SETTINGS = [
    {"temperature": 0},
    {"temperature": 0.9, "top_k": 20, "seed": 1},
    {"temperature": 1.2, "top_p": 0.8, "seed": 2},
    {"temperature": 1.0, "min_p": 0.1, "seed": 3},
    {"temperature": 0.7, "top_k": 5, "top_p": 0.9, "min_p": 0.05, "seed": 4},
    {"temperature": 1.0, "seed": 5},
    {"temperature": 1.0, "presence_penalty": 0.5, "seed": 6},  # the host sampler on both
    {"temperature": 1.0, "logprobs": 2, "seed": 7},            # likewise
]


def serve(radiance, model, work, extra, env=None):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    log = open(os.path.join(work, f"serve-{port}.log"), "w")
    proc = subprocess.Popen([radiance, "serve", "--model", model, "--port", str(port), "--cache-dir", work,
                             "--max-seqs", "16", "--max-ctx", "256", "--kv-blocks", "64"] + extra,
                            stdout=subprocess.DEVNULL, stderr=log, env={**os.environ, **(env or {})})
    for _ in range(600):
        try:
            if get(port, "/ready")[0] == 200:
                return proc, port
        except OSError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    proc.kill()
    sys.exit(f"server {' '.join(extra)} did not become ready; see {log.name}")


def run_all(port, prompts):
    """Every setting on every prompt, all at once: {(setting, prompt): token ids}."""
    out = {}
    def one(si, pi):
        st, r = post(port, "/v1/completions", {"prompt": prompts[pi], "max_tokens": 12, "return_token_ids": True,
                                               **SETTINGS[si]})
        out[(si, pi)] = r["choices"][0].get("token_ids") if st == 200 else f"HTTP {st}: {r}"
    threads = [threading.Thread(target=one, args=(si, pi)) for si in range(len(SETTINGS)) for pi in range(len(prompts))]
    [t.start() for t in threads]
    [t.join() for t in threads]
    return out


def main():
    radiance, fixture, tokdir, homes = sys.argv[1:5]
    work = tempfile.mkdtemp(prefix="radiance-sampling-")
    model = model_dir(fixture, tokdir, work)
    prompts = [ids for ids, _ in golden(os.path.join(fixture, "golden.safetensors"))]
    servers = []
    failed = 0
    try:
        card_args = ["--placement", "device", "--kernels", "libfakedev", "--radiance-home", homes]
        host, hport = serve(radiance, model, work, card_args, {"RADIANCE_SAMPLE_ON_HOST": "1"})
        servers.append(host)
        card, cport = serve(radiance, model, work, card_args)
        servers.append(card)
        logs = {p: open(os.path.join(work, f"serve-{p}.log")).read() for p in (hport, cport)}
        drawn_where_asked = "sampling on the card" not in logs[hport] and "sampling on the card" in logs[cport]
        failed += not drawn_where_asked
        print(("PASS" if drawn_where_asked else "FAIL"), "the default server samples on the card, the other on the host (ready lines)")
        on_host, on_card = run_all(hport, prompts), run_all(cport, prompts)
        for key in sorted(on_host):
            ok = isinstance(on_host[key], list) and on_host[key] == on_card[key]
            failed += not ok
            print(("PASS" if ok else "FAIL"), f"settings {SETTINGS[key[0]]} prompt{key[1]}:", on_card[key],
                  "" if ok else f"host: {on_host[key]}")
        sampled_differ = any(on_card[(si, pi)] != on_card[(0, pi)] for si in range(1, 6) for pi in range(len(prompts)))
        failed += not sampled_differ
        print(("PASS" if sampled_differ else "FAIL"), "sampled requests differ from greedy ones (the settings arrived)")
    finally:
        for p in servers:
            p.terminate()
            p.wait(60)
        shutil.rmtree(work, ignore_errors=True)
    print(f"{failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

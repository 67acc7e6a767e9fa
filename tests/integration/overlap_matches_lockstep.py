#!/usr/bin/env python3
"""Over HTTP, the overlapped scheduler serves what the lockstep one serves: the same model twice,
once as served by default (each step built and sent while the one before runs, continuing rows fed
on the workers) and once with --disable-overlap-schedule, under the same load: requests arriving
one after another while others run, greedy and seeded sampling of every kind, logprobs and
penalties (rows the host must see first), structured output (a regular expression, a choice, a
JSON schema: each row's mask follows from the token it picked last, so such a row is never fed),
max_tokens from 3 to 40, stop strings, and streams the client drops midway. Every request's token ids, text and finish reason must be equal on both; a
dropped stream's ids must be the start of the same request's ids run to its end. /props must show
that the default server overlapped its steps (and the other never did), and both must end with no
request running and no KV block held.

usage: overlap_matches_lockstep.py RADIANCE_BIN MODEL_DIR [--serve-arg ARG ...]

Mutations this test was seen to fail on (2026-12-07): the scheduler feeding a row from its
neighbour's out row (fed_from j ^ 1: 42 of 48 requests differ, CPU workers); a one-rank host
worker not putting the fed tokens in (45 differ); ranks other than 0 staging a stand-in greedy pick
for every row, as they did before (--tp 2 on the pretend card: its 24 sampled requests differ);
Scheduler::feedable() not refusing constrained rows (their fed rows carry no mask: 8 of the 12
constrained requests differ, ending in error after a token outside their constraint; CPU workers).
"""
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from restart_under_load import PROMPTS, free_port, get, wait_ready  # noqa: E402

SETTINGS = [
    {"temperature": 0},
    {"temperature": 0.9, "top_k": 20},
    {"temperature": 1.2, "top_p": 0.8},
    {"temperature": 1.0, "min_p": 0.1},
    {"temperature": 0.7, "top_k": 5, "top_p": 0.9, "min_p": 0.05},
    {"temperature": 0},
    {"temperature": 1.0, "logprobs": 2},             # the host sees its tokens first
    {"temperature": 0.8, "presence_penalty": 0.5},   # likewise
]
STOPS = [",", " the", "."]
REGEX = r"[A-Z][a-z]{2,8} (sails|rows) \d{1,3} leagues"
CHOICES = ["whale", "ship", "the sea"]
SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}, "age": {"type": "integer"}},
          "required": ["name", "age"], "additionalProperties": False}
CONSTRAINTS = [{"structured_outputs": {"regex": REGEX}}, {"structured_outputs": {"choice": CHOICES}},
               {"structured_outputs": {"json": SCHEMA}}]

CONSTRAINED_SETTINGS = [{"temperature": 0}, {"temperature": 0.9, "top_k": 20}, {"temperature": 1.0},
                        {"temperature": 0.8, "presence_penalty": 0.5}]


def constrained(i):
    return i % 4 == 3


def request(i):
    """Request i of the load: its body (seeded when sampled), and whether its stream is dropped."""
    body = {"prompt": PROMPTS[i % len(PROMPTS)], "max_tokens": 3 + (i * 7) % 38, "return_token_ids": True,
            **SETTINGS[i % len(SETTINGS)]}
    if body.get("temperature", 1) > 0:
        body["seed"] = 1000 + i
    if i % 5 == 2:
        body["stop"] = [STOPS[i % len(STOPS)]]
    if constrained(i):  # each constraint greedy, sampled, and sampled with a penalty; no stop string
        body = {"prompt": body["prompt"], "max_tokens": 48, "return_token_ids": True, "seed": 1000 + i,
                **CONSTRAINTS[(i // 4) % len(CONSTRAINTS)], **CONSTRAINED_SETTINGS[(i // 12) % len(CONSTRAINED_SETTINGS)]}
    return body, i % 6 == 5


def serve(radiance, model, work, extra):
    port = free_port()
    log = open(os.path.join(work, f"serve-{port}.log"), "w")
    proc = subprocess.Popen([radiance, "serve", "--model", model, "--port", str(port), "--cache-dir", work,
                             "--max-seqs", "16", "--max-ctx", "256"] + extra,
                            stdout=subprocess.DEVNULL, stderr=log)
    if not wait_ready(port, 180):
        proc.kill()
        sys.exit(f"server {' '.join(extra)} did not become ready; see {log.name}")
    return proc, port


def json_object(text):
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def stats(port):
    return json.loads(get(port, "/props")[1])["stats"]


def stream(port, body, drop_after=None):
    """A streamed completion: (token ids, text, finish reason); with drop_after the connection is
    closed once that many ids have come (finish None)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    c.request("POST", "/v1/completions", json.dumps({**body, "stream": True}), {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        raise RuntimeError(f"status {r.status}: {r.read()[:300]!r}")
    ids, text, finish = [], "", None
    for raw in r:
        line = raw.decode().strip()
        if line == "data: [DONE]":
            break
        if not line.startswith("data: "):
            continue
        for ch in json.loads(line[6:]).get("choices", []):
            ids += ch.get("token_ids") or []
            text += ch.get("text", "")
            finish = ch.get("finish_reason") or finish
        if drop_after is not None and len(ids) >= drop_after:
            c.close()  # the client leaves: the server cancels the request
            return ids, text, None
    c.close()
    return ids, text, finish


def load(port, n):
    """n requests, one started every 15 ms while the others run: {i: (ids, text, finish)}, and for a
    dropped stream also its twin run to the end under key -i - 1."""
    out, errors, lock = {}, [], threading.Lock()

    def one(i):
        body, drop = request(i)
        try:
            res = stream(port, body, drop_after=2 if drop else None)
            full = stream(port, body) if drop else None
        except Exception as e:  # reported below
            with lock:
                errors.append(f"request {i}: {e}")
            return
        with lock:
            out[i] = res
            if full:
                out[-i - 1] = full

    threads = []
    for i in range(n):
        threads.append(threading.Thread(target=one, args=(i,)))
        threads[-1].start()
        time.sleep(0.015)
    for t in threads:
        t.join()
    return out, errors


def settle(port):
    """Waits until no request runs (a dropped stream's cancel lands at the next step)."""
    for _ in range(100):
        s = stats(port)
        if s["requests_running"] == 0 and s["requests_waiting"] == 0 and s["kv_blocks_used"] == 0:
            return s
        time.sleep(0.1)
    return stats(port)


def main():
    radiance, model = sys.argv[1], sys.argv[2]
    extra = [sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--serve-arg"]
    n = 48
    work = tempfile.mkdtemp(prefix="radiance-overlap-")
    servers, failures = [], []
    try:
        lock_proc, lock_port = serve(radiance, model, work, extra + ["--disable-overlap-schedule"])
        servers.append(lock_proc)
        over_proc, over_port = serve(radiance, model, work, extra)
        servers.append(over_proc)
        lockstep, errors_l = load(lock_port, n)
        overlapped, errors_o = load(over_port, n)
        failures += errors_l + errors_o
        stops, whole = 0, 0
        for i in range(n):
            body, drop = request(i)
            want, got = lockstep.get(i), overlapped.get(i)
            if want is None or got is None:
                continue  # in errors
            if drop:
                full_l, full_o = lockstep[-i - 1], overlapped[-i - 1]
                if full_l != full_o:
                    failures.append(f"request {i} ({body}): overlapped {full_o} != lockstep {full_l}")
                if got[0] != full_o[0][:len(got[0])] or want[0] != full_l[0][:len(want[0])]:
                    failures.append(f"request {i}: a dropped stream's ids {got[0]} are not the start of {full_o[0]}")
                continue
            if constrained(i):
                whole += got[2] == "stop"  # the constraint completed
                if got[2] == "stop" and not (re.fullmatch(REGEX, got[1]) or got[1] in CHOICES or json_object(got[1])):
                    failures.append(f"request {i} ({body}): {got[1]!r} does not match its constraint")
            else:
                stops += got[2] == "stop"
            if got != want:
                failures.append(f"request {i} ({body}): overlapped {got} != lockstep {want}")
        print(f"{n} requests compared, {stops} ended by a stop string, {whole} of {sum(map(constrained, range(n)))} "
              "constrained ones complete")
        if stops == 0:
            failures.append("no request ended by its stop string: the stop strings were never exercised")
        if whole == 0:
            failures.append("no constrained request completed: structured output was never exercised")
        s_lock, s_over = settle(lock_port), settle(over_port)
        print(f"overlapped_steps: {s_over['overlapped_steps']} of {s_over['steps']} (lockstep server: {s_lock['overlapped_steps']})")
        if s_over["overlapped_steps"] <= 0:
            failures.append("the default server never sent a step while another ran")
        if s_lock["overlapped_steps"] != 0:
            failures.append("--disable-overlap-schedule still overlapped steps")
        for name, s in (("lockstep", s_lock), ("overlapped", s_over)):
            if s["requests_running"] or s["requests_waiting"] or s["kv_blocks_used"]:
                failures.append(f"the {name} server ended with {s['requests_running']} running, {s['requests_waiting']} "
                                f"waiting, {s['kv_blocks_used']} blocks held")
    finally:
        for p in servers:
            p.terminate()
            p.wait(60)
    for f in failures[:30]:
        print("FAIL", f)
    print("PASS" if not failures else f"{len(failures)} failed")
    if not failures:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print("logs in", work)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

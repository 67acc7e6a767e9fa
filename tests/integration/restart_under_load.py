#!/usr/bin/env python3
"""A server with 2 worker ranks (CPU, tensor parallel) serves 32 concurrent streaming requests
while one rank is killed with SIGKILL 5 times at random moments. Every request must finish with
exactly the text an undisturbed run gives (greedy), rank_restarts_total must count 5, and /ready
must go 503 and back to 200.

usage: restart_under_load.py RADIANCE_BIN MODEL_DIR [--kills N] [--requests N] [--serve-arg ARG ...]

--serve-arg passes ARG on to `radiance serve` (repeat it), e.g. the pretend card's placement, where
the ranks record tensor-parallel decode graphs that must be dropped when the group re-forms.
"""
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

PROMPTS = ["Call me Ishmael.", "The white whale", "Captain Ahab stood upon the quarter-deck, and",
           "It was a dark night, and the", "Queequeg was a native of", "The Pequod sailed",
           "Starbuck said to the captain", "There she blows!"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def get(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read().decode()
    finally:
        c.close()


def stream(port, prompt, max_tokens):
    """One streaming completion; returns the concatenated text and the finish reason."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    body = json.dumps({"prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "stream": True})
    c.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        raise RuntimeError(f"status {r.status}: {r.read()[:300]!r}")
    text, finish = "", None
    for raw in r:
        line = raw.decode().strip()
        if not line.startswith("data: "):
            continue
        data = line[6:]
        if data == "[DONE]":
            break
        chunk = json.loads(data)
        if "error" in chunk:
            raise RuntimeError(f"stream error: {chunk['error']}")
        for ch in chunk.get("choices", []):
            text += ch.get("text", "")
            finish = ch.get("finish_reason") or finish
    c.close()
    return text, finish


def run_all(port, n):
    results = [None] * n
    errors = []

    def one(i):
        try:
            results[i] = stream(port, PROMPTS[i % len(PROMPTS)], 24 + (i % 5) * 6)
        except Exception as e:  # a failed request is a test failure, reported below
            errors.append(f"request {i}: {e}")
    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    return threads, results, errors


def worker_pids(server_pid):
    pids = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != server_pid:
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            if b"--rank" in argv:
                pids[int(argv[argv.index(b"--rank") + 1])] = int(pid)
        except (OSError, ValueError, IndexError):
            continue
    return pids


def wait_ready(port, timeout):
    end = time.time() + timeout
    while time.time() < end:
        try:
            if get(port, "/ready")[0] == 200:
                return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def main():
    radiance, model = sys.argv[1], sys.argv[2]
    kills = int(sys.argv[sys.argv.index("--kills") + 1]) if "--kills" in sys.argv else 5
    n = int(sys.argv[sys.argv.index("--requests") + 1]) if "--requests" in sys.argv else 32
    extra = [sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--serve-arg"]
    port = free_port()
    cache = f"/tmp/radiance-restart-test-{os.getpid()}"
    server = subprocess.Popen([radiance, "serve", "--model", model, "--tp", "2", "--port", str(port),
                               "--cache-dir", cache, "--max-seqs", "32", "--max-batch-tokens", "256"] + extra,
                              stdout=subprocess.DEVNULL, stderr=open(f"{cache}.log", "w"))
    failures = []
    try:
        if not wait_ready(port, 180):
            raise SystemExit("the server did not become ready; log in " + cache + ".log")
        # Undisturbed reference run.
        threads, reference, errors = run_all(port, n)
        for t in threads:
            t.join()
        if errors:
            raise SystemExit("undisturbed run failed: " + "; ".join(errors[:3]))

        # Disturbed run: kill a random rank 5 times while the requests stream.
        threads, results, errors = run_all(port, n)
        saw_503 = False
        rng = random.Random(7)
        for k in range(kills):
            time.sleep(rng.uniform(0.05, 0.6))
            pids = worker_pids(server.pid)
            rank = rng.choice(sorted(pids)) if pids else None
            if rank is None:
                failures.append("no worker process found to kill")
                break
            os.kill(pids[rank], signal.SIGKILL)
            t0 = time.time()
            while time.time() - t0 < 5:
                if get(port, "/ready")[0] == 503:
                    saw_503 = True
                    break
                time.sleep(0.01)
            if not wait_ready(port, 120):
                failures.append(f"/ready did not come back after kill {k + 1}")
                break
        for t in threads:
            t.join()
        failures += errors
        for i, (ref, got) in enumerate(zip(reference, results)):
            if got != ref:
                failures.append(f"request {i}: disturbed {got!r} != undisturbed {ref!r}")
        status, metrics = get(port, "/metrics")
        restarts = sum(float(line.split()[-1]) for line in metrics.splitlines()
                       if line.startswith("radiance:rank_restarts_total{"))
        if restarts != kills:
            failures.append(f"rank_restarts_total counts {restarts}, expected {kills}")
        if not saw_503:
            failures.append("/ready never answered 503 while a rank was down")
        if get(port, "/ready")[0] != 200:
            failures.append("/ready is not 200 at the end")
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
            code = "killed after 60 s"
        if code != 0:
            failures.append(f"SIGTERM drain exited with {code}, expected 0")
    checks = 6
    for f in failures:
        print("FAIL", f)
    print(f"{checks - min(checks, len(failures))} passed, {len(failures)} failed")
    if not failures:  # the cache and the server's log are kept only where they explain a failure
        shutil.rmtree(cache, ignore_errors=True)
        os.remove(f"{cache}.log")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

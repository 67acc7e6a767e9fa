#!/usr/bin/env python3
"""A server with 2 worker ranks (CPU, tensor parallel; --tp changes it) serves N concurrent streaming clients while
one rank is killed with SIGKILL K times. Checked:

- every kill lands while requests stream: before each kill the script waits until a client holds a
  stream that has received tokens and not ended and the /metrics gauge
  radiance:num_requests_running is above 0; afterwards the kill must have re-queued requests for
  recompute (/props stats.requeued_after_rank_loss grew) and, by the clients' own timestamps, some
  request must have had its first tokens before the kill and its end after it. (Before, the
  requests were sent once and later kills could hit an idle server: an instrumented run saw the
  5th kill land after every request had finished, and the test passed.) To keep work in flight
  for every kill, each client sends request after request until the last kill.
- every request, undisturbed or disturbed, generates exactly transformers' greedy token ids
  (demo_greedy_reference.json, float32 transformers, made by tools/golden/demo_greedy.py) for its
  prompt up to its max_tokens, got over HTTP with return_token_ids (ids, not text: issue [14]
  loses the first token's leading space in text for this SentencePiece vocabulary);
- every disturbed request's text equals the undisturbed text of the same prompt and length;
- rank_restarts_total counts K, /ready goes 503 and back to 200, SIGTERM drains with exit 0.

The pretend card's variant (tests/fakedev: bf16 KV, libref rows) could in principle differ from
float32 transformers at a near-tie; measured, it gives the reference's 48 ids exactly for all 8
prompts alone and under this load, so it is held to the same exact comparison.

usage: restart_under_load.py RADIANCE_BIN MODEL_DIR [--kills N] [--requests N] [--serve-arg ARG ...]
                             [--reference JSON] [--overlapped] [--sampled] [--tp N]

--tp N: ranks (default 2); at 1 every kill takes the whole group, and every running request is
recomputed by prefill from what it had.

--serve-arg passes ARG on to `radiance serve` (repeat it), e.g. the pretend card's placement, where
the ranks record tensor-parallel decode graphs that must be dropped when the group re-forms.
--reference replaces demo_greedy_reference.json (beside this script).
--sampled: requests draw their tokens (temperatures 0.6, 0.8 and 1.0 by request, a seed each, the
same for a disturbed request as for its undisturbed twin) and are held only to the undisturbed run's
text, ids and logprobs (the chosen tokens', compared exactly), there being no transformers
reference for draws. On the demo model a last-bit difference flips a draw too rarely to be seen
in 32 requests (without --deterministic the texts matched), but it shows in the logprobs. A recomputed prefix must then give
the decoded one's logits bit for bit, or a draw flips: with `--serve-arg --deterministic` on the
host (docs/OPS.md general rules) every text must match; without it some do not (issue [21]).
--overlapped: the server overlaps its steps (a step sent while the one before runs), and some kill
must land with two steps in flight (/props stats.lost_with_two_in_flight), whose requests are then
checked like any other.

Mutations this test was seen to fail on (then reverted): the disturbed run as before (each client
sending one request, no wait for streams) with 1.5 s more before kills 4 and 5, as on a faster
machine: "kill 4 re-queued no request: it landed on an idle server" and "kill 4: no request was
mid-stream at the kill" (unmutated, the same delays pass: the clients keep sending); one id changed
in a copy of the reference given with --reference: "ids differ from transformers' at 20".
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
EOS = 2  # </s>: the server stops there and leaves it out of the tokens


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


def shape(i):
    """Request i's prompt index and max_tokens (24..48)."""
    return i % len(PROMPTS), 24 + (i % 5) * 6


def expected_ids(reference, prompt, max_tokens):
    """Transformers' greedy ids for `prompt`, cut at max_tokens or at </s> (which is not returned)."""
    ids = reference[prompt]["generated_ids"][:max_tokens]
    return ids[:ids.index(EOS)] if EOS in ids else ids


def draw(i):
    """Request i's sampling fields under --sampled (request i + n has request i's)."""
    return {"temperature": (0.6, 0.8, 1.0)[i % 3], "seed": 1000 + i, "logprobs": 1}


def stream(port, prompt, max_tokens, rec, sampling=None):
    """One streaming completion with return_token_ids, greedy unless `sampling` gives temperature
    and seed. Fills rec: text, ids, prompt_ids, finish, t_first (monotonic time of the first chunk
    carrying tokens) and t_end (after the last chunk)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    body = json.dumps({"prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "stream": True,
                       "return_token_ids": True, **(sampling or {})})
    c.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        raise RuntimeError(f"status {r.status}: {r.read()[:300]!r}")
    rec.update(text="", ids=[], prompt_ids=None, finish=None)
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
            rec["text"] += ch.get("text", "")
            rec["finish"] = ch.get("finish_reason") or rec["finish"]
            if "prompt_token_ids" in ch:
                rec["prompt_ids"] = ch["prompt_token_ids"]
            if ch.get("logprobs"):
                rec.setdefault("lps", []).extend(ch["logprobs"].get("token_logprobs") or [])
            if ch.get("token_ids"):
                rec["ids"] += ch["token_ids"]
                rec.setdefault("t_first", time.monotonic())
    c.close()
    rec["t_end"] = time.monotonic()


class Load:
    """n client threads; client t sends requests t, t + n, t + 2n, ... (request j has request
    j % n's shape) one after another until stop() is called, or just one if once."""

    def __init__(self, port, n, once, sampled=False):
        self.records, self.errors, self.lock = [], [], threading.Lock()
        self.stopping = threading.Event()
        self.n = n

        def client(t):
            j = t
            while True:
                p, k = shape(j % n)
                rec = {"j": j, "prompt": PROMPTS[p], "max_tokens": k, "t_start": time.monotonic()}
                with self.lock:
                    self.records.append(rec)
                try:
                    stream(port, PROMPTS[p], k, rec, draw(j % n) if sampled else None)
                except Exception as e:  # a failed request is a test failure, reported below
                    with self.lock:
                        self.errors.append(f"request {j}: {e}")
                    return
                j += n
                if once or self.stopping.is_set():
                    return
        self.threads = [threading.Thread(target=client, args=(t,)) for t in range(n)]
        for t in self.threads:
            t.start()

    def streaming(self):
        """Requests that have received tokens and not ended."""
        with self.lock:
            return [r for r in self.records if "t_first" in r and "t_end" not in r]

    def finish(self):
        self.stopping.set()
        for t in self.threads:
            t.join()
        return self.records, self.errors


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


def metric(port, name):
    """The sum of a /metrics sample's values over its labels."""
    _, text = get(port, "/metrics")
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name + "{"))


def requeued(port):
    return json.loads(get(port, "/props")[1])["stats"]["requeued_after_rank_loss"]


def main():
    radiance, model = sys.argv[1], sys.argv[2]
    opt = lambda name, default: sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default
    kills = int(opt("--kills", 5))
    tp = opt("--tp", "2")
    n = int(opt("--requests", 32))
    ref_path = opt("--reference", os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo_greedy_reference.json"))
    extra = [sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--serve-arg"]
    with open(ref_path) as f:
        reference = {s["prompt"]: s for s in json.load(f)["samples"]}
    missing = [p for p in PROMPTS if p not in reference]
    if missing:
        raise SystemExit(f"{ref_path} lacks prompts {missing}")
    if any(len(reference[p]["generated_ids"]) < shape(4)[1] and EOS not in reference[p]["generated_ids"]
           for p in PROMPTS):
        raise SystemExit(f"{ref_path} holds fewer ids than the longest request asks for")
    port = free_port()
    cache = f"/tmp/radiance-restart-test-{os.getpid()}"
    server = subprocess.Popen([radiance, "serve", "--model", model, "--tp", tp, "--port", str(port),
                               "--cache-dir", cache, "--max-seqs", "32", "--max-batch-tokens", "256"] + extra,
                              stdout=subprocess.DEVNULL, stderr=open(f"{cache}.log", "w"))
    failures = []

    sampled = "--sampled" in sys.argv

    def check_ids(what, rec):
        if sampled:  # draws have no transformers reference: held to the undisturbed run below
            return
        want = expected_ids(reference, rec["prompt"], rec["max_tokens"])
        got = rec.get("ids") or []
        if got != want:
            at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            failures.append(f"{what} ({rec['prompt']!r}, max_tokens {rec['max_tokens']}): ids differ from "
                            f"transformers' at {at}: got {got[at:at + 4]}..., want {want[at:at + 4]}... "
                            f"({len(got)} ids, want {len(want)})")
        if rec.get("prompt_ids") != reference[rec["prompt"]]["prompt_ids"]:
            failures.append(f"{what}: prompt ids {rec.get('prompt_ids')} != {reference[rec['prompt']]['prompt_ids']}")

    try:
        if not wait_ready(port, 180):
            raise SystemExit("the server did not become ready; log in " + cache + ".log")
        # Undisturbed run: n requests at once, one each.
        undisturbed, errors = Load(port, n, once=True, sampled=sampled).finish()
        if errors:
            raise SystemExit("undisturbed run failed: " + "; ".join(errors[:3]))
        text_of, ids_of, lps_of = {}, {}, {}
        for rec in undisturbed:
            check_ids(f"undisturbed request {rec['j']}", rec)
            text_of[rec["j"]] = rec["text"]
            ids_of[rec["j"]] = rec.get("ids")
            lps_of[rec["j"]] = rec.get("lps")

        # Disturbed run: kill a random rank while requests stream, `kills` times.
        load = Load(port, n, once=False, sampled=sampled)
        saw_503 = False
        rng = random.Random(7)
        kill_times = []
        for k in range(kills):
            before = requeued(port)
            time.sleep(rng.uniform(0.05, 0.4))  # vary where in the streams the kill lands
            # Kill only once a client holds a stream that has had tokens and not ended, and the
            # scheduler counts requests running (a stream re-queued by the last kill may still be
            # recomputing: a kill then is one more case, not an idle server).
            end = time.monotonic() + 60
            running = 0
            while time.monotonic() < end:
                if load.streaming():
                    running = metric(port, "radiance:num_requests_running")
                    if running > 0:
                        break
                time.sleep(0.005)
            if running <= 0:
                failures.append(f"kill {k + 1}: no request was seen streaming within 60 s")
                break
            pids = worker_pids(server.pid)
            rank = rng.choice(sorted(pids)) if pids else None
            if rank is None:
                failures.append("no worker process found to kill")
                break
            if k == kills - 1:
                load.stopping.set()  # no new requests after the last kill: they would only add time
            kill_times.append(time.monotonic())
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
            # The server's own word that the kill caught requests in the running batch.
            if requeued(port) <= before:
                failures.append(f"kill {k + 1} re-queued no request: it landed on an idle server")
        results, errors = load.finish()
        failures += errors
        # The clients' word: some stream had its first tokens before each kill and ended after it.
        for k, t in enumerate(kill_times):
            through = [r for r in results if r.get("t_first", t) < t < r.get("t_end", 0)]
            if not through:
                failures.append(f"kill {k + 1}: no request was mid-stream at the kill")
            else:
                print(f"kill {k + 1}: {len(through)} request(s) mid-stream")
        for rec in results:
            if "t_end" not in rec:
                continue  # failed; in errors
            check_ids(f"request {rec['j']}", rec)
            if rec["text"] != text_of[rec["j"] % n] or rec.get("ids") != ids_of[rec["j"] % n]:
                failures.append(f"request {rec['j']}: disturbed {rec['text']!r} != undisturbed {text_of[rec['j'] % n]!r}")
            elif sampled and rec.get("lps") != lps_of[rec["j"] % n]:
                # a draw flips only now and then at the host's last-bit differences; the logprobs
                # show every one (and without --deterministic they differ: tested)
                a, b = rec.get("lps") or [], lps_of[rec["j"] % n] or []
                at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                failures.append(f"request {rec['j']}: logprobs differ from the undisturbed run's at {at}: "
                                f"{a[at:at + 2]} != {b[at:at + 2]} (same text)")
        print(f"{len(results)} disturbed requests")
        restarts = metric(port, "radiance:rank_restarts_total")
        if restarts != kills:
            failures.append(f"rank_restarts_total counts {restarts}, expected {kills}")
        if not saw_503:
            failures.append("/ready never answered 503 while a rank was down")
        if "--overlapped" in sys.argv:
            st = json.loads(get(port, "/props")[1])["stats"]
            print(f"overlapped steps {st['overlapped_steps']} of {st['steps']}, "
                  f"{st['lost_with_two_in_flight']} rank loss(es) with two steps in flight")
            if st["overlapped_steps"] <= 0:
                failures.append("no step was sent while another ran")
            if st["lost_with_two_in_flight"] <= 0:
                failures.append("no kill landed with two steps in flight")
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
    for f in failures[:40]:
        print("FAIL", f)
    if len(failures) > 40:
        print(f"... and {len(failures) - 40} more failures")
    print("PASS" if not failures else f"{len(failures)} failed")
    if not failures:  # the cache and the server's log are kept only where they explain a failure
        shutil.rmtree(cache, ignore_errors=True)
        os.remove(f"{cache}.log")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

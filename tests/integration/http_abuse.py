#!/usr/bin/env python3
"""Issue 32's HTTP-layer abuse shapes against a running `radiance serve` on the demo model, while
/health and a normal authorised completion are timed throughout (each must answer within 2 s).

Server A (--api-key, --admin-key, --max-connections 256):
- keyless requests announcing 8 MiB bodies over 50 connections: each gets its 401 from the header
  alone, and the connection ends before the body could go through;
- 50 connections each sending an 8 MiB keyless body at once: the server's RSS (VmRSS) grows by
  less than 64 MB and every connection ends within 10 s;
- smuggling framings (Transfer-Encoding with Content-Length, a final coding other than chunked):
  400 and the connection closed, even with the key;
- 20 slow clients trickling their bodies a byte at a time: /health keeps answering, and each is
  served once its body is complete;
- a non-streamed n=8 generation whose client sends one more byte and leaves: the running
  requests (radiance:num_requests_running) drop to 0 within 3 s, not when the generation ends;
- the admin key alone passes /admin/ (the API key does not); Host is not checked with a key;
- bodies: 100k keys to /tokenize, 200k logit_bias pairs to /completion, n=8 with a
  full-vocabulary logit_bias: each a 400 naming the cap or field within 1 s; four n=8 requests
  with 1024-entry biases at once are all served;
- /metrics: a stop-string finish counts as finished_reason="stop", and http_requests_total has
  /health's 200s, /v1/completions' 401s and /tokenize's 400s by endpoint and code.
Server B (no key, loopback, --max-connections 8):
- a foreign Host gets 421, localhost is served;
- past 8 connections a 503 comes at once; with the server out of descriptors (its RLIMIT_NOFILE
  lowered to what it has open) it does not spin (under 0.5 s of CPU in 2 s) and /health answers
  again once descriptors are free.
And `radiance serve --api-key ""` (or --admin-key "", or an empty $RADIANCE_API_KEY), a keyless
non-loopback --host, --no-auth with a key and a port in use are startup errors (exit 1); the deploy files take the key
from a secret or an environment file (server A gets its key from $RADIANCE_API_KEY too).

usage: http_abuse.py RADIANCE_BIN MODEL_DIR

Mutations seen failing (each on its own, the C++ rebuilt):
- the key checked after the body (Session::on_header's denied() call removed): "keyless header-only:
  401 within 2 s" and "RSS grew" (by ~400 MB);
- framing_problem() not called: "chunked, gzip with Content-Length: 400";
- on_watch not re-posting its read after bytes came: "running requests back to 0 within 3 s"
  (it took the whole generation, ~13 s);
- no connection cap (the max_connections check in accept() removed): "the 9th connection gets 503";
- accept retried at once on EMFILE: "no spinning while out of descriptors" (~2 s of CPU in 2 s);
- host_guard forced off: "keyless loopback server: foreign Host gets 421";
- shape_error() not counting keys: "100k-key body" (200 after ~38 s, the watchdog's /health
  over 2 s); the scheduler's step byte budget removed, with the slot cut to 64 KiB: "4 x n=8 with
  1024-entry logit_bias" (500s: the steps exceed the slot).
"""
import http.client
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

KEY = "abuse-test-key"
ADMIN = "abuse-admin-key"
AUTH = {"Authorization": "Bearer " + KEY}

passed, failed = 0, 0


def check(ok, what):
    global passed, failed
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    passed, failed = passed + bool(ok), failed + (not ok)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def request(port, method, path, body=None, headers=None, timeout=10):
    """(status, body bytes, seconds)."""
    t0 = time.time()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        c.request(method, path, json.dumps(body) if body is not None else None, h)
        r = c.getresponse()
        data = r.read()
        return r.status, data, time.time() - t0
    finally:
        c.close()


def connect(port, timeout=5):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_answer(s, within):
    """What comes within `within` seconds, and whether the server closed (EOF or reset)."""
    end = time.time() + within
    out, closed = b"", False
    while time.time() < end:
        s.settimeout(max(0.01, end - time.time()))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        except OSError:
            closed = True
            break
        if not chunk:
            closed = True
            break
        out += chunk
    return out, closed


def head(path, length, extra=""):
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{extra}"
            f"Content-Length: {length}\r\n\r\n").encode()


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def metric(port, name):
    st, body, _ = request(port, "GET", "/metrics")
    for line in body.decode().splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("RADIANCE_API_KEY", "RADIANCE_ADMIN_KEY")}
    env.update(extra)
    return env


class Server:
    def __init__(self, radiance, model, work, name, args, env=None):
        self.port = free_port()
        self.log = os.path.join(work, name + ".log")
        self.proc = subprocess.Popen([radiance, "serve", "--model", model, "--port", str(self.port),
                                      "--cache-dir", os.path.join(work, "cache")] + args,
                                     stdout=subprocess.DEVNULL, stderr=open(self.log, "w"), env=env or clean_env())
        end = time.time() + 120
        while True:
            try:
                if request(self.port, "GET", "/ready", timeout=2)[0] == 200:
                    break
            except OSError:
                pass
            if time.time() > end or self.proc.poll() is not None:
                raise SystemExit(f"{name} did not become ready; its log:\n" + open(self.log).read()[-3000:])
            time.sleep(0.1)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Watchdog(threading.Thread):
    """/health every 0.25 s and a short authorised completion every second; the slowest of each."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.stop_flag = port, threading.Event()
        self.health_max, self.completion_max, self.errors, self.completions = 0.0, 0.0, [], 0

    def run(self):
        last_completion = 0.0
        while not self.stop_flag.is_set():
            try:
                st, _, dt = request(self.port, "GET", "/health", timeout=5)
                self.health_max = max(self.health_max, dt)
                if st != 200:
                    self.errors.append(f"/health {st}")
                if time.time() - last_completion > 1:
                    last_completion = time.time()
                    st, body, dt = request(self.port, "POST", "/v1/completions",
                                           {"prompt": "Call me Ishmael.", "max_tokens": 8, "temperature": 0},
                                           AUTH, timeout=10)
                    self.completion_max = max(self.completion_max, dt)
                    self.completions += 1
                    if st != 200:
                        self.errors.append(f"completion {st}: {body[:200]!r}")
            except OSError as e:
                self.errors.append(f"{type(e).__name__}: {e}")
            time.sleep(0.25)


def startup_errors(radiance, model, work):
    for args, env, flag in ((["--api-key", ""], {}, "--api-key"), (["--admin-key", ""], {}, "--admin-key"),
                            ([], {"RADIANCE_API_KEY": ""}, "RADIANCE_API_KEY"), (["--host", "0.0.0.0"], {}, "--no-auth"),
                            (["--no-auth", "--api-key", KEY], {}, "--no-auth")):
        p = subprocess.run([radiance, "serve", "--model", model, "--port", str(free_port()),
                            "--cache-dir", os.path.join(work, "cache")] + args,
                           capture_output=True, text=True, timeout=60, env=clean_env(**env))
        what = " ".join(repr(a) if not a else a for a in args) + "".join(f" ${k}={v!r}" for k, v in env.items())
        check(p.returncode != 0 and flag in p.stderr,
              f"serve {what}: a startup error naming {flag} (rc {p.returncode}: {p.stderr.strip()[-200:]!r})")
    # A port in use: exit 1 naming it (it was std::terminate, rc 134: the bind threw past the
    # loader and signal threads). Mutation run: server.listen() dropped from serve() gives rc 134.
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        p = subprocess.run([radiance, "serve", "--model", model, "--port", str(port), "--cache-dir", os.path.join(work, "cache")],
                           capture_output=True, text=True, timeout=60, env=clean_env())
    finally:
        holder.close()
    check(p.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in p.stderr,
          f"serve on a port in use: exit 1 naming it (rc {p.returncode}: {p.stderr.strip()[-160:]!r})")


def deploy_files():
    """The shipped files bind as docs/OPERATIONS.md says, with the key from a secret or a file."""
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    unit = open(os.path.join(src, "deploy/systemd/radiance.service")).read()
    exec_start = unit.split("ExecStart=", 1)[1].split("\n\n", 1)[0].replace("\\\n", " ")
    check("\nEnvironmentFile=/etc/radiance/radiance.env" in unit and "--host 127.0.0.1 " in exec_start
          and "--api-key" not in exec_start and "--no-auth" not in exec_start,
          "systemd: keys from a required EnvironmentFile, bound to 127.0.0.1, no key on the command line")
    k8s = open(os.path.join(src, "deploy/k8s/radiance.yaml")).read()
    api_ref = k8s.split("name: RADIANCE_API_KEY", 1)[1].split("- name:", 1)[0] if "name: RADIANCE_API_KEY" in k8s else ""
    check("secretKeyRef: {name: radiance-keys, key: api-key}" in api_ref and "optional" not in api_ref
          and "--no-auth" not in k8s and '"--api-key"' not in k8s,
          "kubernetes: RADIANCE_API_KEY from the Secret radiance-keys (not optional), no --no-auth")
    docker = open(os.path.join(src, "deploy/docker/Dockerfile")).read()
    cmd = [line for line in docker.splitlines() if line.startswith("CMD ")]
    check(len(cmd) == 1 and '"0.0.0.0"' in cmd[0] and "--no-auth" not in cmd[0] and "--api-key" not in cmd[0],
          "docker: 0.0.0.0 without --no-auth or a baked-in key (so it needs RADIANCE_API_KEY to start)")


def keyless_header_only(port):
    """50 connections announce 8 MiB bodies without a key and send only the header."""
    socks = [connect(port) for _ in range(50)]
    for s in socks:
        s.sendall(head("/v1/completions", 8 * 1024 * 1024))
    slow, bad, body_went_through = 0, [], 0
    t0 = time.time()
    for s in socks:
        answer, _ = read_answer(s, max(0.1, t0 + 2 - time.time()))
        if not answer.startswith(b"HTTP/1.1 401"):
            bad.append(answer[:60])
        try:  # the server closed after its 401: the body cannot all go through
            s.settimeout(5)
            s.sendall(b"x" * (8 * 1024 * 1024))
            body_went_through += 1
        except OSError:
            pass
        s.close()
    check(not bad and time.time() - t0 < 2.5, f"keyless header-only: 401 within 2 s on 50 connections "
          f"({len(bad)} without: {bad[:3]}; {time.time() - t0:.2f} s)")
    check(body_went_through == 0, f"keyless header-only: no connection took the 8 MiB body ({body_went_through} did)")


def keyless_bodies(port, pid):
    """50 connections send 8 MiB keyless bodies at once: the server must not buffer them."""
    base = rss_kb(pid)
    peak = [base]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_kb(pid))
            time.sleep(0.02)

    ended = []

    def blast():
        try:
            s = connect(port, timeout=10)
            try:
                s.sendall(head("/v1/completions", 8 * 1024 * 1024) + b"x" * (8 * 1024 * 1024))
            except OSError:
                pass
            _, closed = read_answer(s, 10)
            ended.append(closed)
            s.close()
        except OSError:
            ended.append(True)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    t0 = time.time()
    threads = [threading.Thread(target=blast) for _ in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    done.set()
    sampler.join()
    grew_mb = (peak[0] - base) / 1024
    check(grew_mb < 64, f"50 x 8 MiB keyless bodies: RSS grew {grew_mb:.1f} MB (from {base / 1024:.1f} MB; limit 64)")
    check(len(ended) == 50 and all(ended), f"50 x 8 MiB keyless bodies: every connection ended "
          f"({sum(ended)} of 50 within {time.time() - t0:.1f} s)")


def smuggling(port):
    body = json.dumps({"content": "Call me Ishmael."}).encode()
    chunked = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    auth = f"Authorization: Bearer {KEY}\r\n"
    cases = [
        ("chunked, gzip with Content-Length", f"Transfer-Encoding: chunked, gzip\r\nContent-Length: {len(body)}\r\n", body),
        ("Content-Length then chunked", f"Content-Length: {len(chunked)}\r\nTransfer-Encoding: chunked\r\n", chunked),
        ("chunked then Content-Length", f"Transfer-Encoding: chunked\r\nContent-Length: {len(chunked)}\r\n", chunked),
        ("chunked, gzip alone", "Transfer-Encoding: chunked, gzip\r\n", body),
        ("gzip alone", "Transfer-Encoding: gzip\r\n", body),
    ]
    for name, fields, payload in cases:
        s = connect(port)
        s.sendall(f"POST /tokenize HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{auth}{fields}\r\n".encode()
                  + payload)
        answer, closed = read_answer(s, 2)
        s.close()
        check(answer.startswith(b"HTTP/1.1 400") and closed, f"{name}: 400 and the connection closed "
              f"(got {answer[:40]!r}, closed {closed})")
    s = connect(port)  # the sound framing still works
    s.sendall(f"POST /tokenize HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Transfer-Encoding: chunked\r\n\r\n".encode() + chunked)
    answer, _ = read_answer(s, 2)
    s.close()
    check(answer.startswith(b"HTTP/1.1 200"), f"plain chunked: 200 (got {answer[:40]!r})")


def slow_clients(port):
    """20 authorised clients trickle a body a byte every 50 ms (~3 s); each is served at the end."""
    body = json.dumps({"content": "Call me Ishmael. Some years ago."}).encode()
    results = []

    def trickle():
        try:
            s = connect(port, timeout=15)
            s.sendall(head("/tokenize", len(body), f"Authorization: Bearer {KEY}\r\n"))
            for i in range(len(body)):
                s.sendall(body[i:i + 1])
                time.sleep(0.05)
            answer, _ = read_answer(s, 5)
            results.append(answer.startswith(b"HTTP/1.1 200"))
            s.close()
        except OSError:
            results.append(False)

    threads = [threading.Thread(target=trickle) for _ in range(20)]
    for t in threads:
        t.start()
    health = []
    while any(t.is_alive() for t in threads):
        health.append(request(port, "GET", "/health", timeout=5)[2])
        time.sleep(0.1)
    for t in threads:
        t.join()
    check(len(results) == 20 and all(results), f"20 slow clients each served once their body is complete ({sum(results)} of 20)")
    check(health and max(health) < 1, f"/health while 20 clients trickle: slowest {max(health or [0]):.3f} s of {len(health)}")


def pipelined_disconnect(port):
    """A non-streamed generation whose client sends one byte more and leaves must stop soon after."""
    body = json.dumps({"prompt": "Call me Ishmael.", "n": 8, "max_tokens": 1000, "ignore_eos": True,
                       "temperature": 0.8}).encode()
    s = connect(port)
    s.sendall(head("/v1/completions", len(body), f"Authorization: Bearer {KEY}\r\n") + body)
    end = time.time() + 10
    while (metric(port, "radiance:num_requests_running") or 0) < 1 and time.time() < end:
        time.sleep(0.05)
    running = metric(port, "radiance:num_requests_running") or 0
    check(running >= 1, f"the n=8 generation runs ({running} running)")
    s.sendall(b"X")  # one pipelined byte
    time.sleep(0.3)
    s.close()
    t0 = time.time()
    while (metric(port, "radiance:num_requests_running") or 0) > 0 and time.time() - t0 < 20:
        time.sleep(0.05)
    took = time.time() - t0
    check(took < 3, f"running requests back to 0 within 3 s of the client leaving (took {took:.2f} s)")


def admin_and_host(port):
    # /admin/ranks/99/restart has no route: past authentication it is a 404, refused a 401.
    st_admin = request(port, "POST", "/admin/ranks/99/restart", headers={"Authorization": "Bearer " + ADMIN})[0]
    st_api = request(port, "POST", "/admin/ranks/99/restart", headers=AUTH)[0]
    check(st_admin == 404 and st_api == 401, f"the admin key alone passes /admin/ ({st_admin}), the API key does not ({st_api})")
    st = request(port, "GET", "/v1/models", headers={**AUTH, "Host": "radiance.example.com"})[0]
    check(st == 200, f"with a key, any Host is served ({st})")


def host_check(port):
    bad = request(port, "GET", "/health", headers={"Host": "rebound.example.com"})
    good = request(port, "GET", "/health", headers={"Host": f"localhost:{port}"})
    check(bad[0] == 421, f"keyless loopback server: foreign Host gets 421 ({bad[0]})")
    check(good[0] == 200, f"keyless loopback server: Host localhost is served ({good[0]})")


def connection_cap(srv):
    port, pid = srv.port, srv.proc.pid
    held = []
    for _ in range(8):
        s = connect(port)
        s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer, _ = read_answer(s, 1)  # the whole small answer comes in one read
        held.append(s)
    over = connect(port)
    t0 = time.time()
    answer, closed = read_answer(over, 2)
    over.close()
    check(answer.startswith(b"HTTP/1.1 503") and closed and time.time() - t0 < 1.5,
          f"the 9th connection gets 503 and is closed at once ({answer[:30]!r}, {time.time() - t0:.2f} s)")
    # Out of descriptors: the soft limit at the lowest free descriptor number, so that no new one
    # can be made and accept fails (EMFILE). A descriptor the server closes meanwhile would let one
    # more through (to be refused at the cap): then lower the limit again.
    saved = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    waiting, logged, limits = [], False, []
    for _ in range(5):
        in_use = {int(fd) for fd in os.listdir(f"/proc/{pid}/fd")}
        limits.append(next(n for n in range(len(in_use) + 1) if n not in in_use))
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (limits[-1], saved[1]))
        waiting.append(connect(port))  # queued by the kernel, not accepted
        time.sleep(0.3)
        with open(srv.log) as f:
            logged = "accept failed" in f.read()
        if logged:
            break
    waiting += [connect(port) for _ in range(4)]
    time.sleep(0.2)
    c0 = cpu_s(pid)
    time.sleep(2)
    spent = cpu_s(pid) - c0
    resource.prlimit(pid, resource.RLIMIT_NOFILE, saved)
    check(logged, f"out of descriptors, the log says accept failed (limits tried {limits})")
    check(spent < 0.5, f"no spinning while out of descriptors: {spent:.2f} s of CPU in 2 s")
    for s in held + waiting:
        s.close()
    t0, st = time.time(), None
    while time.time() - t0 < 3:
        try:
            st = request(port, "GET", "/health", timeout=1)[0]
            if st == 200:
                break
        except OSError:
            pass
        time.sleep(0.1)
    check(st == 200 and time.time() - t0 < 2, f"/health answers once descriptors are free ({st}, {time.time() - t0:.2f} s)")


def timed(port, path, body, timeout=10):
    """(status, body, seconds), or (None, b"", timeout) when no answer came in time."""
    try:
        return request(port, "POST", path, body, AUTH, timeout=timeout)
    except (socket.timeout, TimeoutError):
        return None, b"", timeout


def body_shapes(port, vocab):
    """Issue 32's body shapes: each refused (or served) within 1 s, naming the field."""
    wide = {"content": "hi"}
    wide.update({f"k{i}": i for i in range(100000)})  # 1.3 MB: 12-38 s of an io thread before
    st, body, took = timed(port, "/tokenize", wide)
    check(st == 400 and b"more than 1024 keys" in body and took < 1,
          f"100k-key body: 400 naming the cap within 1 s ({st}, {took:.2f} s)")
    pairs = {"prompt": "Call me", "n_predict": 2, "logit_bias": [[i % vocab, 1] for i in range(200000)]}
    st, body, took = timed(port, "/completion", pairs)
    check(st == 400 and b"logit_bias" in body and took < 1,
          f"200k logit_bias pairs: 400 naming logit_bias within 1 s ({st}, {took:.2f} s)")
    full = {"model": "demo", "messages": [{"role": "user", "content": "Hi"}], "n": 8, "max_tokens": 4,
            "logit_bias": {str(i): 0 for i in range(vocab)}}
    st, body, took = timed(port, "/v1/chat/completions", full)
    check(st == 400 and b"logit_bias" in body and took < 1,
          f"n=8 with a full-vocabulary logit_bias ({vocab}): 400 naming logit_bias within 1 s ({st}, {took:.2f} s)")
    # At the cap: 8 choices of 1024 biased tokens each travel in every step, beside other clients
    # (the watchdog's completions); before, such steps overflowed the shared-memory slot and the
    # scheduler rebuilt them forever, stalling every request.
    capped = dict(full, logit_bias={str(i): 0 for i in range(min(1024, vocab))}, max_tokens=8)
    results = []

    def one():
        results.append(timed(port, "/v1/chat/completions", capped, timeout=60)[0])

    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(results == [200] * 4, f"4 x n=8 with 1024-entry logit_bias at once: all served ({results})")


def metrics_read(port):
    """/metrics tells what happened: answers by endpoint and code, finishes by reason."""
    stop_before = metric_labeled(port, "radiance:request_success_total", 'finished_reason="stop"')
    st, body, _ = request(port, "POST", "/v1/completions",
                          {"model": "demo", "prompt": "It was the best of times", "max_tokens": 40, "temperature": 0,
                           "stop": [" ", "e", "a", "o"]}, AUTH)
    finish = json.loads(body)["choices"][0]["finish_reason"] if st == 200 else None
    stop_after = metric_labeled(port, "radiance:request_success_total", 'finished_reason="stop"')
    check(finish == "stop" and stop_after == stop_before + 1,
          f"a stop-string finish counts as stop in request_success_total ({finish}; {stop_before} -> {stop_after})")
    health = metric_labeled(port, "radiance:http_requests_total", 'code="200",endpoint="/health"')
    denied = metric_labeled(port, "radiance:http_requests_total", 'code="401",endpoint="/v1/completions"')
    refused = metric_labeled(port, "radiance:http_requests_total", 'code="400",endpoint="/tokenize"')
    check(health > 10 and denied >= 1 and refused >= 1,
          f"http_requests_total by endpoint and code: /health 200 x{health}, /v1/completions 401 x{denied}, "
          f"/tokenize 400 x{refused}")


def metric_labeled(port, name, labels):
    """The value of name{...labels...} (labels as Prometheus prints them, in order), 0 if absent."""
    st, body, _ = request(port, "GET", "/metrics")
    for line in body.decode().splitlines():
        if line.startswith(name + "{") and labels in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def main():
    radiance, model = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="radiance-http-abuse-")
    servers = []
    try:
        startup_errors(radiance, model, work)
        deploy_files()
        # The key from the environment, as the deploy files give it.
        a = Server(radiance, model, work, "keyed", ["--admin-key", ADMIN, "--max-connections", "256"],
                   env=clean_env(RADIANCE_API_KEY=KEY))
        servers.append(a)
        dog = Watchdog(a.port)
        dog.start()
        keyless_header_only(a.port)
        keyless_bodies(a.port, a.proc.pid)
        smuggling(a.port)
        slow_clients(a.port)
        pipelined_disconnect(a.port)
        admin_and_host(a.port)
        with open(os.path.join(model, "config.json")) as f:
            body_shapes(a.port, json.load(f)["vocab_size"])
        metrics_read(a.port)
        dog.stop_flag.set()
        dog.join()
        check(not dog.errors, f"/health and completions answered throughout ({dog.errors[:3]})")
        check(dog.health_max < 2, f"/health within 2 s throughout (slowest {dog.health_max:.3f} s)")
        check(dog.completions >= 5 and dog.completion_max < 2,
              f"{dog.completions} authorised completions within 2 s each (slowest {dog.completion_max:.3f} s)")
        b = Server(radiance, model, work, "keyless", ["--max-connections", "8"])
        servers.append(b)
        host_check(b.port)
        connection_cap(b)
    finally:
        for s in servers:
            s.stop()
        if not failed:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("server logs kept in", work)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

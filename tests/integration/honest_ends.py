#!/usr/bin/env python3
"""Issue 33's end-to-end checks against `radiance serve` on the demo model (a SentencePiece
vocabulary with byte fallback):

- text in context: "Call me" + greedy tokens forced to "▁than" answers " than than than" (the
  word-start space kept), echo gives "Call me than than than", and /completion agrees; the text
  equals /detokenize(prompt + generated) minus /detokenize(prompt), and logprobs' tokens join to it;
- the context is the model's max_position_embeddings: a copy of the demo folder whose config says
  8,192 positions is served with max_model_len 8192 (the old default capped it at 4,096); with a
  small --kv-blocks the context is cut to what the cache holds, the log says why, /v1/models and
  /props report it, and a request past it is a 400;
- a drain past --shutdown-timeout ends every open stream properly: OpenAI completions and chat
  streams get a final chunk with finish_reason "abort" and [DONE], Anthropic's a message_delta with
  stop_reason "pause_turn" and message_stop, llama-server's a final event with stop true; a
  non-streamed request in flight is answered 200 with its text so far and finish_reason "abort";
  the process exits 0.

usage: honest_ends.py RADIANCE_BIN MODEL_DIR

Mutations seen failing (each on its own, the C++ rebuilt):
- drain_on_signal without abort_all (the old server.stop() at the timeout): every stream's "final
  event" check, "non-streamed answer" (RemoteDisconnected) and "the log says ... aborted";
- serve's old default context (min(training context, 4096)): "max_model_len 8192" and "the log
  says the context was cut" (it read "context 4096 cut to 640").
"""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

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


def request(port, method, path, body=None, timeout=60):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, json.dumps(body) if body is not None else None, {"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        return r.status, json.loads(data) if data else None
    finally:
        c.close()


class Server:
    def __init__(self, radiance, model, work, name, args=()):
        self.port = free_port()
        self.log = os.path.join(work, name + ".log")
        env = {k: v for k, v in os.environ.items() if k not in ("RADIANCE_API_KEY", "RADIANCE_ADMIN_KEY")}
        self.proc = subprocess.Popen([radiance, "serve", "--model", model, "--port", str(self.port),
                                      "--cache-dir", os.path.join(work, "cache")] + list(args),
                                     stdout=subprocess.DEVNULL, stderr=open(self.log, "w"), env=env)
        end = time.time() + 180
        while True:
            try:
                if request(self.port, "GET", "/ready", timeout=2)[0] == 200:
                    break
            except (OSError, ValueError):
                pass
            if time.time() > end or self.proc.poll() is not None:
                raise SystemExit(f"{name} did not become ready; its log:\n" + open(self.log).read()[-3000:])
            time.sleep(0.1)

    def log_text(self):
        with open(self.log) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def text_in_context(port):
    st, tok = request(port, "POST", "/tokenize", {"content": "than", "with_pieces": True})
    than = tok["tokens"][-1]["id"]
    check(tok["tokens"][-1]["piece"] == " than", f"/tokenize shows '▁than' as ' than' ({tok['tokens']})")
    body = {"prompt": "Call me", "max_tokens": 3, "temperature": 0, "logit_bias": {str(than): 100},
            "return_token_ids": True, "logprobs": 1}
    st, j = request(port, "POST", "/v1/completions", body)
    c = j["choices"][0]
    check(c["text"] == " than than than", f"text keeps the word-start space ({c['text']!r})")
    prompt_ids, gen_ids = c["prompt_token_ids"], c["token_ids"]
    _, whole = request(port, "POST", "/detokenize", {"tokens": prompt_ids + gen_ids})
    _, head = request(port, "POST", "/detokenize", {"tokens": prompt_ids})
    check(whole["content"].startswith(head["content"]) and c["text"] == whole["content"][len(head["content"]):],
          f"text is decode(prompt + generated) minus decode(prompt) ({whole['content']!r} vs {head['content']!r})")
    check("".join(c["logprobs"]["tokens"]) == c["text"] and c["logprobs"]["text_offset"] == [0, 5, 10],
          f"logprobs' tokens join to the text, offsets count characters ({c['logprobs']['tokens']}, "
          f"{c['logprobs']['text_offset']})")
    body.pop("logprobs")
    st, j = request(port, "POST", "/v1/completions", dict(body, echo=True))
    check(j["choices"][0]["text"] == "Call me than than than", f"echo ({j['choices'][0]['text']!r})")
    st, j = request(port, "POST", "/completion", {"prompt": "Call me", "n_predict": 3, "temperature": 0,
                                                 "logit_bias": [[than, 100]]})
    check(j["content"] == " than than than", f"llama /completion ({j['content']!r})")


def context_from_config(radiance, model, work):
    folder = os.path.join(work, "demo8k")
    shutil.copytree(model, folder)
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    cfg["max_position_embeddings"] = 8192
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    s = Server(radiance, folder, work, "ctx8k")
    try:
        _, m = request(s.port, "GET", "/v1/models")
        check(m["data"][0].get("max_model_len") == 8192, f"max_model_len 8192 from the config ({m['data'][0]})")
    finally:
        s.stop()
    s = Server(radiance, folder, work, "ctx-cut", ["--kv-blocks", "40"])
    try:
        _, m = request(s.port, "GET", "/v1/models")
        _, props = request(s.port, "GET", "/props")
        cut = m["data"][0].get("max_model_len")
        check(cut is not None and cut < 8192 and props["default_generation_settings"]["n_ctx"] == cut,
              f"/v1/models and /props report the cut context ({cut}, n_ctx {props['default_generation_settings']['n_ctx']})")
        check(f"context 8192 cut to {cut} tokens" in s.log_text() and "--kv-blocks" in s.log_text(),
              "the log says the context was cut, and why")
        st, j = request(s.port, "POST", "/v1/completions", {"prompt": "Call me", "max_tokens": cut})
        check(st == 400 and "context" in j["error"]["message"], f"past the cut context: 400 ({st}: {j})")
    finally:
        s.stop()


class Stream(threading.Thread):
    """One request read to its end; `first` is set once a first event (or the answer) came."""

    def __init__(self, port, path, body, stream=True):
        super().__init__(daemon=True)
        self.port, self.path, self.body, self.stream = port, path, body, stream
        self.first, self.events, self.error, self.answer = threading.Event(), [], None, None

    def run(self):
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            c.request("POST", self.path, json.dumps(self.body), {"Content-Type": "application/json"})
            r = c.getresponse()
            if not self.stream:
                self.first.set()
                self.answer = (r.status, json.loads(r.read()))
                return
            for raw in r:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("data: "):
                    self.events.append(line[6:])
                    self.first.set()
        except Exception as e:  # a cut connection is what this test looks for
            self.error = f"{type(e).__name__}: {e}"
        finally:
            self.first.set()


def drain_past_timeout(radiance, model, work):
    s = Server(radiance, model, work, "drain", ["--shutdown-timeout", "0"])
    no_eos = {"2": -100}
    long = {"max_tokens": 900, "temperature": 0, "logit_bias": no_eos}
    streams = {
        "completions": Stream(s.port, "/v1/completions", dict(long, prompt="Call me Ishmael.", stream=True)),
        "chat": Stream(s.port, "/v1/chat/completions",
                       dict(long, messages=[{"role": "user", "content": "Tell me a story."}], stream=True)),
        "anthropic": Stream(s.port, "/v1/messages", {"max_tokens": 900, "temperature": 0, "stream": True,
                                                     "messages": [{"role": "user", "content": "Tell me a story."}]}),
        "llama": Stream(s.port, "/completion", {"prompt": "Call me Ishmael.", "n_predict": 900, "temperature": 0,
                                                "logit_bias": [[2, -100]], "stream": True}),
    }
    whole = Stream(s.port, "/v1/completions", dict(long, prompt="It was a dark night."), stream=False)
    for t in list(streams.values()) + [whole]:
        t.start()
    for t in streams.values():
        t.first.wait(60)
    time.sleep(0.3)  # the non-streamed one is running too by now
    s.proc.send_signal(signal.SIGTERM)
    try:
        code = s.proc.wait(60)
    except subprocess.TimeoutExpired:
        code = None
    for t in list(streams.values()) + [whole]:
        t.join(30)
    check(code == 0, f"the drained server exits 0 ({code})")

    def last_json(ev, pred):
        for e in reversed(ev):
            if e != "[DONE]":
                j = json.loads(e)
                if pred(j):
                    return j
        return None

    for name in ("completions", "chat"):
        ev = streams[name].events
        fin = last_json(ev, lambda j: j.get("choices") and j["choices"][0].get("finish_reason"))
        check(ev and ev[-1] == "[DONE]" and fin and fin["choices"][0]["finish_reason"] == "abort",
              f"{name} stream: a final chunk with finish_reason 'abort', then [DONE] "
              f"({len(ev)} events, last {ev[-2:] if ev else None}, error {streams[name].error})")
    ev = streams["anthropic"].events
    delta = last_json(ev, lambda j: j.get("type") == "message_delta")
    check(ev and json.loads(ev[-1]).get("type") == "message_stop" and delta and
          delta["delta"]["stop_reason"] == "pause_turn",
          f"anthropic stream: message_delta with stop_reason 'pause_turn', then message_stop "
          f"({len(ev)} events, last {ev[-2:] if ev else None}, error {streams['anthropic'].error})")
    ev = streams["llama"].events
    check(ev and json.loads(ev[-1]).get("stop") is True,
          f"llama stream: a final event with stop true ({len(ev)} events, last {ev[-1:] if ev else None}, "
          f"error {streams['llama'].error})")
    ans = whole.answer
    check(ans and ans[0] == 200 and ans[1]["choices"][0]["finish_reason"] == "abort" and ans[1]["choices"][0]["text"],
          f"non-streamed answer: 200, its text so far, finish_reason 'abort' ({str(ans)[:300]}, error {whole.error})")
    check("ended" in s.log_text() and "as aborted" in s.log_text(), "the log says requests were ended as aborted")


def main():
    radiance, model = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="honest-ends-")
    try:
        s = Server(radiance, model, work, "text")
        try:
            text_in_context(s.port)
        finally:
            s.stop()
        context_from_config(radiance, model, work)
        drain_past_timeout(radiance, model, work)
    finally:
        if not failed:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("server logs kept in", work)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

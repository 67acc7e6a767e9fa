#!/usr/bin/env python3
"""Structured output end to end on the demo model (a SentencePiece vocabulary with byte fallback),
served by `radiance serve` on CPU workers, sampling on (temperature 1, many seeds):

- OpenAI chat response_format json_schema (strict): every output parses with json.loads and
  validates with the jsonschema package against its schema, and ends with finish_reason "stop";
- vLLM's structured_outputs regex and choice on /v1/completions: re.fullmatch and membership;
- llama-server's /completion with a GBNF grammar and with json_schema;
- JSON object mode: every output that stopped is a JSON object;
- unconstrained requests give the same text alone and while constrained rows share their steps;
- bad constraints are 400s naming the field, and an unsatisfiable schema is a 400, not a hang.

usage: structured_output.py RADIANCE_BIN MODEL_DIR

Mutation seen failing (the C++ rebuilt): the worker ignoring SampleSpec::allowed (sample_row
without the mask): "json_schema: 0/24 outputs parse and validate", and the run stops at the next
check. (The stop tokens' place is tests/unit/api/test_structured_output.cpp's.)
"""
import concurrent.futures
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import jsonschema

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


def request(port, path, body, timeout=120):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        return r.status, json.loads(data) if data else None
    finally:
        c.close()


SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "mood": {"enum": ["calm", "stormy"]},
        "crew": {"type": "array", "items": {"type": "string", "pattern": "^[A-Z][a-z]{1,8}$"}, "maxItems": 3},
        "captain": {"type": "boolean"},
    },
    "required": ["name", "age", "mood", "crew"],
    "additionalProperties": False,
}
REGEX = r"[A-Z][a-z]{2,8} (sails|rows) \d{1,3} leagues"
CHOICES = ["whale", "ship", "the sea"]
GBNF = 'root ::= "Call me " name "." ( " " name "!" )?\nname ::= [A-Z] [a-z]{1,10}\n'
GBNF_RE = r"Call me [A-Z][a-z]{1,10}\.( [A-Z][a-z]{1,10}!)?"
SEEDS = range(1, 25)


def chat(messages, **kw):
    body = {"messages": [{"role": "user", "content": messages}], "temperature": 1.0, "max_tokens": 400}
    body.update(kw)
    return body


def main():
    radiance, model = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="radiance-structured-")
    port = free_port()
    log = os.path.join(work, "serve.log")
    env = {k: v for k, v in os.environ.items() if k not in ("RADIANCE_API_KEY", "RADIANCE_ADMIN_KEY")}
    proc = subprocess.Popen([radiance, "serve", "--model", model, "--port", str(port), "--cache-dir", os.path.join(work, "cache")],
                            stdout=subprocess.DEVNULL, stderr=open(log, "w"), env=env)
    try:
        end = time.time() + 180
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("GET", "/ready")
                if c.getresponse().status == 200:
                    break
            except OSError:
                pass
            if time.time() > end or proc.poll() is not None:
                raise SystemExit("the server did not become ready:\n" + open(log).read()[-3000:])
            time.sleep(0.1)
        run(port)
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


def run(port):
    pool = concurrent.futures.ThreadPoolExecutor(16)

    # Unconstrained texts alone first: the reference for the mixed batches below.
    plain = {s: request(port, "/v1/completions", {"prompt": "Call me Ishmael.", "max_tokens": 24, "temperature": 1.0, "seed": s})[1]
             for s in range(1, 7)}

    # response_format json_schema over chat, many seeds at once (their rows share steps), with
    # unconstrained requests in the same batches.
    rf = {"type": "json_schema", "json_schema": {"name": "sailor", "strict": True, "schema": SCHEMA}}
    futures = {s: pool.submit(request, port, "/v1/chat/completions", chat("Describe a sailor as JSON.", seed=s, response_format=rf))
               for s in SEEDS}
    mixed = {s: pool.submit(request, port, "/v1/completions", {"prompt": "Call me Ishmael.", "max_tokens": 24, "temperature": 1.0, "seed": s})
             for s in range(1, 7)}
    ok, stops, sample = 0, 0, None
    for s, f in futures.items():
        st, j = f.result()
        if st != 200:
            check(False, f"json_schema seed {s}: status {st} {j}")
            continue
        c = j["choices"][0]
        text = c["message"]["content"]
        try:
            jsonschema.validate(json.loads(text), SCHEMA)
            ok += 1
            sample = text
        except Exception as e:  # noqa: BLE001 - any parse or validation failure is the finding
            check(False, f"json_schema seed {s}: {text!r} does not validate: {e}")
        stops += c["finish_reason"] == "stop"
    check(ok == len(SEEDS), f"json_schema: {ok}/{len(SEEDS)} outputs parse and validate (e.g. {sample!r})")
    check(stops == len(SEEDS), f"json_schema: {stops}/{len(SEEDS)} end with finish_reason 'stop'")
    same = sum(mixed[s].result()[1]["choices"][0]["text"] == plain[s]["choices"][0]["text"] for s in mixed)
    check(same == len(mixed), f"unconstrained texts are the same alone and beside constrained rows ({same}/{len(mixed)})")
    st, j = request(port, "/v1/completions", {"prompt": "Call me Ishmael.", "max_tokens": 24, "temperature": 1.0, "seed": 1,
                                              "response_format": {"type": "text"}})
    check(j["choices"][0]["text"] == plain[1]["choices"][0]["text"], "response_format text is no constraint")

    # vLLM's regex and choice on completions.
    regex = [pool.submit(request, port, "/v1/completions", {"prompt": "The boat", "max_tokens": 40, "temperature": 1.0, "seed": s,
                                                             "structured_outputs": {"regex": REGEX}}) for s in SEEDS]
    texts = [f.result()[1]["choices"][0]["text"] for f in regex]
    bad = [t for t in texts if not re.fullmatch(REGEX, t)]
    check(not bad, f"regex: {len(texts) - len(bad)}/{len(texts)} fullmatch {REGEX!r} (e.g. {texts[0]!r}; bad: {bad[:3]})")
    choice = [pool.submit(request, port, "/v1/completions", {"prompt": "I saw", "max_tokens": 10, "temperature": 1.0, "seed": s,
                                                              "structured_outputs": {"choice": CHOICES}}) for s in SEEDS]
    texts = [f.result()[1]["choices"][0]["text"] for f in choice]
    check(all(t in CHOICES for t in texts), f"choice: every output is one of {CHOICES} ({sorted(set(texts))})")

    # llama-server's /completion: a GBNF grammar and a json_schema.
    gram = [pool.submit(request, port, "/completion", {"prompt": "He said:", "n_predict": 40, "temperature": 1.0, "seed": s,
                                                        "grammar": GBNF}) for s in SEEDS]
    texts = [f.result()[1]["content"] for f in gram]
    bad = [t for t in texts if not re.fullmatch(GBNF_RE, t)]
    check(not bad, f"/completion grammar: {len(texts) - len(bad)}/{len(texts)} match (e.g. {texts[0]!r}; bad: {bad[:3]})")
    small = {"type": "object", "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer", "minimum": -5, "maximum": 5}},
             "required": ["ok", "n"]}
    js = [pool.submit(request, port, "/completion", {"prompt": "Answer:", "n_predict": 200, "temperature": 1.0, "seed": s,
                                                      "json_schema": small}) for s in SEEDS]
    good = 0
    for f in js:
        t = f.result()[1]["content"]
        try:
            jsonschema.validate(json.loads(t), small)
            good += 1
        except Exception as e:  # noqa: BLE001
            check(False, f"/completion json_schema: {t!r}: {e}")
    check(good == len(SEEDS), f"/completion json_schema: {good}/{len(SEEDS)} validate")

    # JSON object mode: whatever stopped is an object (a weak model may run to max_tokens).
    jo = [pool.submit(request, port, "/v1/chat/completions", chat("JSON please", seed=s, max_tokens=200,
                                                                  response_format={"type": "json_object"})) for s in SEEDS]
    stopped = objects = 0
    for f in jo:
        c = f.result()[1]["choices"][0]
        if c["finish_reason"] != "stop":
            continue
        stopped += 1
        try:
            objects += isinstance(json.loads(c["message"]["content"]), dict)
        except ValueError:
            check(False, f"json_object: {c['message']['content']!r} does not parse")
    check(objects == stopped, f"json_object: every stopped output ({stopped}) is a JSON object")

    # Streaming: the deltas join to a valid document.
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", "/v1/chat/completions", json.dumps(chat("x", seed=3, stream=True, response_format=rf)), {"Content-Type": "application/json"})
    body = c.getresponse().read().decode()
    text = "".join(json.loads(l[6:])["choices"][0]["delta"].get("content", "") for l in body.splitlines()
                   if l.startswith("data: {") and json.loads(l[6:])["choices"])
    try:
        jsonschema.validate(json.loads(text), SCHEMA)
        check(True, f"streamed json_schema output validates ({text!r})")
    except Exception as e:  # noqa: BLE001
        check(False, f"streamed json_schema output {text!r}: {e}")

    # Bad input: 400s naming the field; nothing hangs.
    t0 = time.time()
    st, j = request(port, "/v1/chat/completions", chat("x", response_format={"type": "json_schema", "json_schema": {
        "name": "x", "schema": {"type": "object", "properties": {"a": {"type": "strng"}}}}}), timeout=30)
    check(st == 400 and j["error"]["param"] == "response_format.json_schema.schema" and "/properties/a/type" in j["error"]["message"],
          f"a schema that does not compile: 400 naming the field and place ({st} {j})")
    st, j = request(port, "/v1/chat/completions", chat("x", response_format={"type": "json_schema", "json_schema": {
        "name": "x", "schema": {"$defs": {"a": {"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}}, "required": ["x"]}},
                                "$ref": "#/$defs/a"}}}), timeout=30)
    check(st == 400 and "matches nothing" in j["error"]["message"], f"an unsatisfiable schema: 400 ({st} {j})")
    st, j = request(port, "/v1/completions", {"prompt": "x", "structured_outputs": {"regex": "(a|b"}}, timeout=30)
    check(st == 400 and j["error"]["param"] == "structured_outputs.regex", f"a bad regex: 400 naming the field ({st} {j})")
    st, j = request(port, "/completion", {"prompt": "x", "grammar": "root ::= foo\n"}, timeout=30)
    check(st == 400 and "line 1, column 10" in json.dumps(j), f"a bad grammar: 400 with the line and column ({st} {j})")
    check(time.time() - t0 < 30, "the bad inputs were answered at once")


if __name__ == "__main__":
    main()

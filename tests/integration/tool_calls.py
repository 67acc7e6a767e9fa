#!/usr/bin/env python3
"""Tool calls end to end on the demo model (its template has no tool markup, so the json parser
reads calls and `required` / named choices constrain the output to a JSON array of calls),
served by `radiance serve` on CPU workers, sampling on (temperature 1, many seeds):

- OpenAI tool_choice required (parallel calls allowed) and a named function: every answer has
  tool_calls whose names are tools and whose arguments validate with jsonschema against the
  tool's parameters; finish_reason "tool_calls";
- streamed: the tool_calls deltas (id and name first, then argument fragments) join to the
  non-streamed answer's calls for the same seed;
- Anthropic tool_choice any: tool_use blocks whose input validates; stop_reason "tool_use";
- tool_choice auto on a model that writes prose: the text is the text without tools, no calls;
- a second server with --tool-call-parser hermes: required makes the demo model write Qwen's
  <tool_call> markup, read back into valid calls; --tool-call-parser bogus is a startup error.

usage: tool_calls.py RADIANCE_BIN MODEL_DIR

Mutation seen failing (the C++ rebuilt): read_tool_calls dropping its `constrained` reading (a
required answer that max_tokens cut in its last call becomes text instead of keeping its
complete calls): "required: 9/24 answers are tool_calls that validate".
"""
import concurrent.futures
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import jsonschema

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import structured_output as so  # noqa: E402  (server start-up, request, check)

check, request, free_port = so.check, so.request, so.free_port

WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12}, "unit": {"enum": ["c", "f"]}},
           "required": ["city", "unit"], "additionalProperties": False}
WHALES = {"type": "object", "properties": {"sea": {"enum": ["north", "south"]}, "n": {"type": "integer", "minimum": 0, "maximum": 99},
                                           "names": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 2}},
          "required": ["sea", "n"], "additionalProperties": False}
SCHEMAS = {"get_weather": WEATHER, "count_whales": WHALES}
TOOLS = [{"type": "function", "function": {"name": n, "description": "a tool", "parameters": s}} for n, s in SCHEMAS.items()]
SEEDS = range(1, 25)


def chat(**kw):
    body = {"messages": [{"role": "user", "content": "Who is the captain of the Pequod?"}], "temperature": 1.0, "max_tokens": 300,
            "tools": TOOLS}
    body.update(kw)
    return body


def valid_call(name, arguments):
    try:
        jsonschema.validate(json.loads(arguments), SCHEMAS[name])
        return True
    except Exception:  # noqa: BLE001
        return False


def stream_calls(port, body):
    """The streamed answer's content, calls ([name, arguments]) and finish reason."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", "/v1/chat/completions", json.dumps(dict(body, stream=True)), {"Content-Type": "application/json"})
    text = c.getresponse().read().decode()
    content, calls, finish, ok = "", [], None, True
    for line in text.splitlines():
        if not line.startswith("data: {"):
            continue
        for ch in json.loads(line[6:])["choices"]:
            d = ch["delta"]
            content += d.get("content") or ""
            finish = ch["finish_reason"] or finish
            for t in d.get("tool_calls", []):
                if t["index"] == len(calls):
                    ok = ok and t["id"].startswith("call_") and bool(t["function"]["name"])
                    calls.append([t["function"]["name"], ""])
                calls[t["index"]][1] += t["function"]["arguments"]
    return content, calls, finish, ok


def run(port):
    pool = concurrent.futures.ThreadPoolExecutor(16)

    # required: every answer is calls, every call valid.
    answers = list(pool.map(lambda s: request(port, "/v1/chat/completions", chat(tool_choice="required", seed=s)), SEEDS))
    good = sum(st == 200 and bool(j["choices"][0]["message"].get("tool_calls")) and j["choices"][0]["message"]["content"] is None
               and j["choices"][0]["finish_reason"] == "tool_calls"
               and all(valid_call(c["function"]["name"], c["function"]["arguments"]) for c in j["choices"][0]["message"]["tool_calls"])
               for st, j in answers)
    check(good == len(SEEDS), f"required: {good}/{len(SEEDS)} answers are tool_calls that validate")
    many = sum(len(j["choices"][0]["message"].get("tool_calls", [])) > 1 for _, j in answers)
    check(many > 0, f"required: parallel calls happen ({many}/{len(SEEDS)} answers have several)")

    # A named function, one call, no parallel.
    named = {"type": "function", "function": {"name": "count_whales"}}
    answers = list(pool.map(lambda s: request(port, "/v1/chat/completions", chat(tool_choice=named, seed=s)), SEEDS))
    good = sum(st == 200 and [c["function"]["name"] for c in j["choices"][0]["message"].get("tool_calls", [])] == ["count_whales"]
               and valid_call("count_whales", j["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]) for st, j in answers)
    check(good == len(SEEDS), f"named: {good}/{len(SEEDS)} answers are one valid count_whales call")

    # Streamed against non-streamed, one call each.
    def both(seed):
        body = chat(tool_choice="required", parallel_tool_calls=False, seed=seed)
        st, j = request(port, "/v1/chat/completions", body)
        whole = [[c["function"]["name"], c["function"]["arguments"]] for c in j["choices"][0]["message"].get("tool_calls", [])]
        content, calls, finish, ok = stream_calls(port, body)
        return whole == calls and len(calls) == 1 and content == "" and finish == "tool_calls" and ok
    good = sum(pool.map(both, range(1, 9)))
    check(good == 8, f"streamed: {good}/8 streams give the non-streamed call (id and name first, fragments after)")

    # Anthropic: tool_choice any.
    atools = [{"name": n, "description": "a tool", "input_schema": s} for n, s in SCHEMAS.items()]

    def anthropic(_):
        st, j = request(port, "/v1/messages", {"max_tokens": 300, "temperature": 1.0, "tools": atools, "tool_choice": {"type": "any"},
                                               "messages": [{"role": "user", "content": "Who is the captain of the Pequod?"}]})
        uses = [b for b in j.get("content", []) if b["type"] == "tool_use"]
        return st == 200 and uses and j["stop_reason"] == "tool_use" and all(
            valid_call(b["name"], json.dumps(b["input"])) and b["id"].startswith("toolu_") for b in uses)
    good = sum(pool.map(anthropic, range(12)))
    check(good == 12, f"anthropic any: {good}/12 answers are tool_use blocks that validate")

    # auto on a model that writes prose: the text is what it is without tools.
    st, with_tools = request(port, "/v1/chat/completions", chat(temperature=0, max_tokens=40))
    st2, without = request(port, "/v1/chat/completions", dict(chat(temperature=0, max_tokens=40), tools=None))
    m = with_tools["choices"][0]["message"]
    check(st == 200 and st2 == 200 and m["content"] == without["choices"][0]["message"]["content"] and "tool_calls" not in m
          and with_tools["choices"][0]["finish_reason"] == "length", f"auto: prose stays text, unchanged ({m})")


def wait_ready(port, proc):
    end = time.time() + 180
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/ready")
            if c.getresponse().status == 200:
                return
        except OSError:
            pass
        if time.time() > end or proc.poll() is not None:
            raise SystemExit("the hermes server did not become ready")
        time.sleep(0.1)


def run_hermes():
    """The demo model made to write Qwen's <tool_call> markup (--tool-call-parser hermes)."""
    radiance, model = sys.argv[1], sys.argv[2]
    bad = subprocess.run([radiance, "serve", "--model", model, "--tool-call-parser", "bogus"], capture_output=True, text=True, timeout=60)
    check(bad.returncode != 0 and "'bogus' is not a tool-call parser" in bad.stderr and "hermes" in bad.stderr,
          f"--tool-call-parser bogus: a startup error naming the parsers (exit {bad.returncode}: {bad.stderr.strip()[-200:]})")
    work = tempfile.mkdtemp(prefix="radiance-tools-")
    port = free_port()
    proc = subprocess.Popen([radiance, "serve", "--model", model, "--port", str(port), "--cache-dir", os.path.join(work, "cache"),
                             "--tool-call-parser", "hermes"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(port, proc)
        pool = concurrent.futures.ThreadPoolExecutor(8)
        answers = list(pool.map(lambda s: request(port, "/v1/chat/completions", chat(tool_choice="required", seed=s)), range(1, 13)))
        good = sum(st == 200 and bool(j["choices"][0]["message"].get("tool_calls"))
                   and all(valid_call(c["function"]["name"], c["function"]["arguments"]) for c in j["choices"][0]["message"]["tool_calls"])
                   for st, j in answers)
        check(good == 12, f"hermes markup on a SentencePiece vocabulary: {good}/12 required answers are valid calls")
        both = [stream_calls(port, chat(tool_choice="required", parallel_tool_calls=False, seed=s)) for s in range(1, 5)]
        check(all(content == "" and len(calls) == 1 and valid_call(*calls[0]) and ok for content, calls, _, ok in both),
              f"hermes streamed: no markup as text, one valid call each ({both})")
    finally:
        proc.terminate()
        proc.wait(60)
        shutil.rmtree(work, ignore_errors=True)


def run_all(port):
    run(port)
    run_hermes()


if __name__ == "__main__":
    so.run = run_all
    so.main()

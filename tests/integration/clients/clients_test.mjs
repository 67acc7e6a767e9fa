// The official `openai` and `@anthropic-ai/sdk` clients against a live server (URL in argv[2]):
// non-streaming and streaming agree, errors surface as the SDKs' typed errors.
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";

const base = process.argv[2];
const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: "unused" });
const anthropic = new Anthropic({ baseURL: base, apiKey: "unused" });
let passed = 0, failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`PASS ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e.stack || e}`);
  }
}
function assert(cond, msg) { if (!cond) throw new Error(msg); }

const messages = [{ role: "user", content: "Who is the captain of the Pequod?" }];

await check("openai chat: streamed text equals the non-streamed answer", async () => {
  const full = await openai.chat.completions.create({ model: "demo", messages, max_tokens: 30, temperature: 0 });
  const text = full.choices[0].message.content;
  assert(text.length > 0, "empty answer");
  assert(full.usage.completion_tokens === 30, `completion_tokens ${full.usage.completion_tokens}`);
  let streamed = "";
  const stream = await openai.chat.completions.create({ model: "demo", messages, max_tokens: 30, temperature: 0, stream: true,
                                                        stream_options: { include_usage: true } });
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) streamed += c.delta?.content ?? "";
  }
  assert(streamed === text, `streamed ${JSON.stringify(streamed)} != ${JSON.stringify(text)}`);
  assert(usage && usage.completion_tokens === 30, "no usage chunk");
});

// Two answers of one seed agreeing also passes where the seed is ignored, so a second seed must
// give another answer and the sampled answer must not be the greedy one. At temperature 0.9 over
// 20 tokens an agreement by chance is all but impossible, and each answer is deterministic
// (Philox keyed by seed and draw index, fixed weights). Mutations seen failing (then reverted):
// uniform_at (shared/sampling) ignoring its seed ("seeds 7 and 8 gave the same answer"); the API
// dropping the request's seed ("seed 7 gave two answers").
await check("openai completions: a seed reproduces its sampled answer, another seed gives another", async () => {
  const ask = async (extra) => (await openai.completions.create({
    model: "demo", prompt: "Call me Ishmael.", max_tokens: 20, temperature: 0.9, ...extra })).choices[0].text;
  const a = await ask({ seed: 7 }), b = await ask({ seed: 7 }), c = await ask({ seed: 8 });
  const greedy = await ask({ temperature: 0 });
  assert(a === b, `seed 7 gave two answers: ${JSON.stringify(a)} and ${JSON.stringify(b)}`);
  assert(a !== c, `seeds 7 and 8 gave the same answer ${JSON.stringify(a)}`);
  assert(a !== greedy && c !== greedy, `a sampled answer is the greedy one ${JSON.stringify(greedy)}`);
});

await check("openai: a bad request is a BadRequestError naming the field", async () => {
  try {
    await openai.chat.completions.create({ model: "demo", messages: [], max_tokens: 5 });
    throw new Error("no error");
  } catch (e) {
    assert(e instanceof OpenAI.BadRequestError, `got ${e.constructor.name}`);
    assert(e.status === 400, `status ${e.status}`);
  }
});

await check("openai models list names the served model", async () => {
  const list = await openai.models.list();
  assert(list.data.some((m) => m.id === "demo"), JSON.stringify(list.data));
});

// Embeddings through the SDK: by default it asks for base64 and decodes the bytes itself; with
// encoding_format "float" it takes the numbers as sent. Both must agree and be unit-norm.
await check("openai embeddings.create: base64 (the SDK's default) and float agree, unit-norm", async () => {
  const input = ["Call me Ishmael.", "The whale!"];
  const b = await openai.embeddings.create({ model: "demo", input });
  const f = await openai.embeddings.create({ model: "demo", input, encoding_format: "float" });
  assert(b.data.length === 2 && f.data.length === 2, JSON.stringify(f).slice(0, 200));
  for (let i = 0; i < 2; i++) {
    const x = b.data[i].embedding, y = f.data[i].embedding;
    assert(Array.isArray(x) && x.length === y.length && x.length > 0, `widths ${x.length} ${y.length}`);
    assert(x.every((v, k) => Math.abs(v - y[k]) <= 1e-6), `input ${i}: base64 and float differ`);
    const n = Math.sqrt(y.reduce((s, v) => s + v * v, 0));
    assert(Math.abs(n - 1) < 1e-5, `norm ${n}`);
  }
  assert(f.usage.prompt_tokens > 0 && f.usage.total_tokens === f.usage.prompt_tokens, JSON.stringify(f.usage));
});

// Structured output through the SDK's own parse helper: response_format json_schema (strict), the
// answer's message.parsed is the SDK's JSON.parse of the content and must satisfy the schema
// (checked by hand here); parse() itself throws if the answer was cut by max_tokens. Sampled, so
// the grammar, not greedy luck, makes it valid. Mutation seen failing: the API ignoring
// response_format (parse() throws "Could not parse response content as the length limit was
// reached": the demo model's prose runs to max_tokens).
await check("openai chat.completions.parse: a json_schema response_format gives a parsed object", async () => {
  const schema = {
    type: "object",
    properties: { ship: { type: "string", maxLength: 10 }, whales: { type: "integer", minimum: 0, maximum: 99 },
                  mood: { type: "string", enum: ["calm", "stormy"] } },
    required: ["ship", "whales", "mood"], additionalProperties: false,
  };
  for (const seed of [1, 2, 3]) {
    const r = await openai.beta.chat.completions.parse({
      model: "demo", messages, max_tokens: 200, temperature: 1, seed,
      response_format: { type: "json_schema", json_schema: { name: "voyage", strict: true, schema } },
    });
    const p = r.choices[0].message.parsed;
    assert(p && typeof p === "object", `no parsed object: ${JSON.stringify(r.choices[0].message)}`);
    assert(Object.keys(p).join(",") === "ship,whales,mood", `keys ${Object.keys(p)}`);
    assert(typeof p.ship === "string" && [...p.ship].length <= 10, `ship ${JSON.stringify(p.ship)}`);
    assert(Number.isInteger(p.whales) && p.whales >= 0 && p.whales <= 99, `whales ${p.whales}`);
    assert(p.mood === "calm" || p.mood === "stormy", `mood ${p.mood}`);
    assert(r.choices[0].finish_reason === "stop", `finish_reason ${r.choices[0].finish_reason}`);
  }
});

// Tool calls. The demo model has no tool markup in its template, so tool_choice required (or a
// named function) constrains its output to a JSON array of calls, returned as tool_calls. Its
// strings are bounded here (maxLength): a 14M model given an open string rarely closes it before
// max_tokens. Sampled at temperature 1 over seeds, so the grammar, not greedy luck, makes every
// call parse. Mutations seen failing (then reverted): read_openai_tools reading "required" as
// auto ("seed 1: no tool calls", prose); AnthropicBlocks not opening a tool_use block (the SDK
// itself throws on an input_json_delta with no block open); the streamed call's first delta
// without its name (the SDK's accumulated call has name "").
const tools = [
  { type: "function", function: { name: "get_weather", description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string", maxLength: 12 }, unit: { type: "string", enum: ["c", "f"] } },
                  required: ["city", "unit"], additionalProperties: false } } },
  { type: "function", function: { name: "count_whales", description: "Whales seen in a sea",
    parameters: { type: "object", properties: { sea: { type: "string", enum: ["north", "south"] }, n: { type: "integer", minimum: 0, maximum: 99 } },
                  required: ["sea", "n"], additionalProperties: false } } },
];
// A call's arguments against its tool's schema, checked by hand.
function checkCall(name, argsText) {
  const a = JSON.parse(argsText);
  if (name === "get_weather") {
    assert(Object.keys(a).join(",") === "city,unit", `get_weather keys ${Object.keys(a)}`);
    assert(typeof a.city === "string" && [...a.city].length <= 12, `city ${JSON.stringify(a.city)}`);
    assert(a.unit === "c" || a.unit === "f", `unit ${a.unit}`);
  } else {
    assert(name === "count_whales", `unknown tool ${name}`);
    assert(Object.keys(a).join(",") === "sea,n", `count_whales keys ${Object.keys(a)}`);
    assert(a.sea === "north" || a.sea === "south", `sea ${a.sea}`);
    assert(Number.isInteger(a.n) && a.n >= 0 && a.n <= 99, `n ${a.n}`);
  }
  return a;
}

await check("openai tools: tool_choice required always gives calls that parse (parallel, sampled)", async () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const r = await openai.chat.completions.create({ model: "demo", messages, tools, tool_choice: "required", max_tokens: 300,
                                                     temperature: 1, seed });
    const m = r.choices[0].message;
    assert(m.tool_calls && m.tool_calls.length >= 1, `seed ${seed}: no tool calls: ${JSON.stringify(m)}`);
    assert(m.content === null, `seed ${seed}: content ${JSON.stringify(m.content)}`);
    for (const c of m.tool_calls) {
      assert(c.type === "function" && c.id.startsWith("call_"), JSON.stringify(c));
      checkCall(c.function.name, c.function.arguments);
    }
    assert(r.choices[0].finish_reason === "tool_calls", `finish_reason ${r.choices[0].finish_reason}`);
  }
});

await check("openai tools: a streamed required call equals the non-streamed one (the SDK's stream helper)", async () => {
  for (const seed of [7, 8, 9]) {
    const params = { model: "demo", messages, tools, tool_choice: "required", parallel_tool_calls: false, max_tokens: 300,
                     temperature: 1, seed };
    const whole = (await openai.chat.completions.create(params)).choices[0];
    assert(whole.message.tool_calls?.length === 1, `seed ${seed}: ${JSON.stringify(whole.message)}`);
    const stream = openai.beta.chat.completions.stream(params);
    let deltas = 0;
    stream.on("chunk", (chunk) => { if (chunk.choices[0]?.delta?.tool_calls) deltas++; });
    const final = (await stream.finalChatCompletion()).choices[0];
    const [a, b] = [whole.message.tool_calls[0], final.message.tool_calls?.[0]];
    assert(b, `seed ${seed}: the stream gave no tool call: ${JSON.stringify(final.message)}`);
    assert(a.function.name === b.function.name && a.function.arguments === b.function.arguments,
           `seed ${seed}: streamed ${JSON.stringify(b.function)} != ${JSON.stringify(a.function)}`);
    checkCall(b.function.name, b.function.arguments);
    assert(deltas >= 2, `seed ${seed}: the call came in ${deltas} delta(s), not streamed`);
    assert(final.finish_reason === "tool_calls", `finish_reason ${final.finish_reason}`);
  }
});

await check("openai tools: a named tool_choice calls that function; bad tools are BadRequestErrors", async () => {
  const r = await openai.chat.completions.create({ model: "demo", messages, tools, max_tokens: 200, temperature: 1, seed: 4,
    tool_choice: { type: "function", function: { name: "count_whales" } } });
  const calls = r.choices[0].message.tool_calls;
  assert(calls?.length === 1 && calls[0].function.name === "count_whales", JSON.stringify(r.choices[0].message));
  checkCall("count_whales", calls[0].function.arguments);
  for (const bad of [{ tools: "x" }, { tools, tool_choice: { type: "function", function: { name: "nope" } } },
                     { tool_choice: "required" }]) {
    try {
      await openai.chat.completions.create({ model: "demo", messages, max_tokens: 5, ...bad });
      throw new Error(`no error for ${JSON.stringify(bad)}`);
    } catch (e) {
      assert(e instanceof OpenAI.BadRequestError, `${JSON.stringify(bad)}: got ${e.constructor.name}: ${e.message}`);
    }
  }
});

const anthropicTools = tools.map((t) => ({ name: t.function.name, description: t.function.description, input_schema: t.function.parameters }));

// Anthropic has no seed: sampled answers are checked on their own, and the stream is compared
// with the non-streamed answer greedily.
await check("anthropic tools: tool_choice any gives tool_use blocks, streamed (input_json_delta) and not", async () => {
  for (const temperature of [1, 1, 1, 0]) {
    const params = { model: "demo", max_tokens: 300, messages, tools: anthropicTools, tool_choice: { type: "any", disable_parallel_tool_use: true },
                     temperature };
    const msg = await anthropic.messages.create(params);
    const uses = msg.content.filter((b) => b.type === "tool_use");
    assert(uses.length === 1, `${JSON.stringify(msg.content)}`);
    assert(uses[0].id.startsWith("toolu_"), uses[0].id);
    checkCall(uses[0].name, JSON.stringify(uses[0].input));
    assert(msg.stop_reason === "tool_use", `stop_reason ${msg.stop_reason}`);
    if (temperature !== 0) continue;
    const final = await anthropic.messages.stream(params).finalMessage();  // the SDK parses the input_json_delta events
    const streamed = final.content.filter((b) => b.type === "tool_use");
    assert(streamed.length === 1 && streamed[0].name === uses[0].name &&
           JSON.stringify(streamed[0].input) === JSON.stringify(uses[0].input),
           `streamed ${JSON.stringify(final.content)} != ${JSON.stringify(msg.content)}`);
    assert(final.stop_reason === "tool_use", `streamed stop_reason ${final.stop_reason}`);
  }
});

await check("anthropic tools: tool_use / tool_result history, count_tokens, and a bad tools field", async () => {
  const history = [
    ...messages,
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_01", name: "count_whales", input: { sea: "south", n: 3 } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "three sperm whales" }] },
  ];
  const msg = await anthropic.messages.create({ model: "demo", max_tokens: 10, messages: history, tools: anthropicTools, temperature: 0 });
  assert(msg.content.length >= 1, JSON.stringify(msg));
  const count = await anthropic.messages.countTokens({ model: "demo", messages: history, tools: anthropicTools });
  assert(count.input_tokens === msg.usage.input_tokens, `count_tokens ${count.input_tokens} != input_tokens ${msg.usage.input_tokens}`);
  try {
    await anthropic.messages.create({ model: "demo", max_tokens: 5, messages, tools: "x" });
    throw new Error("no error");
  } catch (e) {
    assert(e instanceof Anthropic.BadRequestError, `got ${e.constructor.name}: ${e.message}`);
  }
});

await check("anthropic messages: streamed text equals the non-streamed answer", async () => {
  const msg = await anthropic.messages.create({ model: "demo", max_tokens: 30, messages, temperature: 0 });
  const text = msg.content.map((b) => b.text).join("");
  assert(text.length > 0, "empty answer");
  assert(msg.stop_reason === "max_tokens", `stop_reason ${msg.stop_reason}`);
  let streamed = "";
  const stream = anthropic.messages.stream({ model: "demo", max_tokens: 30, messages, temperature: 0 });
  stream.on("text", (t) => { streamed += t; });
  const final = await stream.finalMessage();
  assert(streamed === text, `streamed ${JSON.stringify(streamed)} != ${JSON.stringify(text)}`);
  assert(final.usage.output_tokens === 30, `output_tokens ${final.usage.output_tokens}`);
});

await check("anthropic: a bad request is a BadRequestError", async () => {
  try {
    await anthropic.messages.create({ model: "demo", max_tokens: 5, messages: [] });
    throw new Error("no error");
  } catch (e) {
    assert(e instanceof Anthropic.BadRequestError, `got ${e.constructor.name}`);
  }
});

// The Responses API through the SDK: output_text (the SDK's join of the message items) equals the
// streamed deltas, 30 tokens make an incomplete response, retrieve answers the stored one,
// previous_response_id continues it, and an unknown id is a NotFoundError. Flat tools with
// tool_choice required give function_call items whose arguments parse, streamed as
// function_call_arguments deltas adding up to the final item's. Mutation seen failing (then
// reverted): ResponseOutput's output_text and arguments deltas cut (a character off each text
// delta, every arguments delta empty): both checks fail, the final items being built apart
// from the deltas.
const responseTools = tools.map((t) => ({ type: "function", ...t.function, strict: true }));
await check("openai responses.create: streamed text equals the answer, retrieve and previous_response_id", async () => {
  const params = { model: "demo", input: messages[0].content, instructions: "Answer briefly.", max_output_tokens: 30, temperature: 0 };
  const full = await openai.responses.create(params);
  assert(full.object === "response" && full.id.startsWith("resp_"), `id ${full.id}`);
  assert(full.status === "incomplete" && full.incomplete_details?.reason === "max_output_tokens", `status ${full.status}`);
  assert(full.usage.output_tokens === 30, `output_tokens ${full.usage.output_tokens}`);
  assert(full.output_text.length > 0, "empty answer");
  const stream = await openai.responses.create({ ...params, stream: true });
  let streamed = "", types = [];
  for await (const ev of stream) {
    types.push(ev.type);
    if (ev.type === "response.output_text.delta") streamed += ev.delta;
  }
  assert(streamed === full.output_text, `streamed ${JSON.stringify(streamed)} != ${JSON.stringify(full.output_text)}`);
  assert(types[0] === "response.created" && types.at(-1) === "response.incomplete", `events ${types.join(" ")}`);
  // retrieve (this SDK adds no output_text to it): the stored response as answered.
  const got = await openai.responses.retrieve(full.id);
  assert(got.id === full.id && JSON.stringify(got.output) === JSON.stringify(full.output), `retrieved ${JSON.stringify(got)}`);
  const next = await openai.responses.create({ model: "demo", input: "And the ship?", previous_response_id: full.id,
                                              max_output_tokens: 8, temperature: 0 });
  assert(next.previous_response_id === full.id, `previous_response_id ${next.previous_response_id}`);
  assert(next.usage.input_tokens > full.usage.input_tokens, `input_tokens ${next.usage.input_tokens} <= ${full.usage.input_tokens}`);
  try {
    await openai.responses.retrieve("resp_nope");
    throw new Error("no error");
  } catch (e) {
    assert(e instanceof OpenAI.NotFoundError, `got ${e.constructor.name}: ${e.message}`);
  }
});

await check("openai responses.create: tool_choice required gives function_call items, streamed and not", async () => {
  for (const seed of [1, 2]) {
    const params = { model: "demo", input: messages[0].content, tools: responseTools, tool_choice: "required",
                     parallel_tool_calls: false, max_output_tokens: 300, temperature: 1, seed };
    const r = await openai.responses.create(params);
    const calls = r.output.filter((o) => o.type === "function_call");
    assert(calls.length === 1 && calls[0].call_id, `seed ${seed}: ${JSON.stringify(r.output)}`);
    checkCall(calls[0].name, calls[0].arguments);
    const stream = await openai.responses.create({ ...params, stream: true });
    let args = "", done = null;
    for await (const ev of stream) {
      if (ev.type === "response.function_call_arguments.delta") args += ev.delta;
      if (ev.type === "response.completed") done = ev.response;
    }
    const c = done?.output.find((o) => o.type === "function_call");
    assert(c && c.arguments === args && c.name === calls[0].name && c.arguments === calls[0].arguments,
           `seed ${seed}: streamed ${JSON.stringify(c)} vs ${JSON.stringify(calls[0])}`);
  }
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

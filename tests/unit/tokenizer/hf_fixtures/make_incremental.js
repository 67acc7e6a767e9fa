// make_incremental.js: records what Hugging Face `tokenizers` (the node binding, 0.23.2) decodes
// for a prompt and for the prompt followed by generated ids, so the C++ side can check that text
// streamed for generated ids equals decode(prompt + generated) minus decode(prompt), the way
// Hugging Face's incremental decoding (and vLLM's) defines it. test_incremental.cpp replays it.
//
//   NODE_PATH=.../node_modules node make_incremental.js SHARED_DIR DEMO_TOKENIZER_JSON OUT_FILE [CASES]
//
// Output: {"source", "tokenizers": {name: {"cases": [{"prompt", "gen", "skip", "head", "full"}]}}}
// (a variant also names its "base" and the tokenizer.json "overrides" it was made with)
// where head = decode(prompt, skip) and full = decode(prompt + gen, skip). Generated ids are a
// random split of an encoded text (what a model usually emits) or random ids drawn towards byte
// tokens, special tokens and the start of the vocabulary (what it may emit).
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('tokenizers');

const [, , shared, demoJson, outFile, casesArg] = process.argv;
const CASES = Number(casesArg || 150);
let seed = Number(process.env.SEED || 20261204);
function rnd() { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return seed / 4294967296; }
function ri(lo, hi) { return lo + Math.floor(rnd() * (hi - lo + 1)); }
const book = fs.readFileSync(path.join(shared, 'corpus', 'moby-dick.txt'), 'utf8');

const pieces = [' ', '  ', '\n', '\n\n', '\t', ' a', 'é', '’', '—', '中文', '日本語', '한국어', '🐳', '👍🏽', '\u200d',
  '\u2581', "'s", '123', '...', '\ufffd', 'ß', '<s>', '</s>', '<|im_end|>', '<|endoftext|>'];
function text() {
  if (ri(0, 3) === 0) { const s = ri(0, book.length - 300); return book.slice(s, s + ri(1, 160)); }
  let out = '';
  for (let n = ri(1, 20); n > 0; n--) {
    if (ri(0, 2) === 0) out += pieces[ri(0, pieces.length - 1)];
    else { const s = ri(0, book.length - 20); out += book.slice(s, s + ri(1, 12)); }
  }
  return out;
}

function gpt2Json() {
  const vocab = JSON.parse(fs.readFileSync(path.join(shared, 'tokenizers', 'gpt2', 'encoder.json'), 'utf8'));
  const merges = fs.readFileSync(path.join(shared, 'tokenizers', 'gpt2', 'vocab.bpe'), 'utf8')
    .split('\n').filter((l) => l && !l.startsWith('#version'));
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return { version: '1.0', truncation: null, padding: null, normalizer: null, pre_tokenizer: byteLevel,
    post_processor: null, decoder: byteLevel,
    added_tokens: [{ id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false,
      normalized: true, special: true }],
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, vocab, merges } };
}

const read = (p) => JSON.parse(fs.readFileSync(p, 'utf8'));
const sources = {
  qwen3: () => read(path.join(shared, 'tokenizers', 'qwen3', 'tokenizer.json')),
  llama3: () => read(path.join(shared, 'tokenizers', 'llama3', 'tokenizer.json')),
  mistral: () => read(path.join(shared, 'tokenizers', 'mistral', 'tokenizer.json')),
  gpt2: gpt2Json,
  demo: () => read(demoJson),
  // Metaspace's own decoder (prepend_scheme first) instead of Replace + Strip.
  metaspace_first: () => Object.assign(read(path.join(shared, 'tokenizers', 'mistral', 'tokenizer.json')), metaFirst),
};
const metaFirst = { normalizer: null,
  pre_tokenizer: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false },
  decoder: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false } };

(async () => {
  const out = { source: 'tokenizers 0.23.2 (node)', tokenizers: {} };
  for (const [name, load] of Object.entries(sources)) {
    const tok = Tokenizer.fromString(JSON.stringify(load()));
    const vocab = tok.getVocabSize(true);
    const randomId = () => {
      const k = ri(0, 5);
      if (k === 0) return ri(0, 300);                 // byte tokens and specials of SentencePiece vocabularies
      if (k === 1) return ri(Math.max(0, vocab - 300), vocab - 1);  // added tokens at the end
      return ri(0, vocab - 1);
    };
    const cases = [];
    for (let i = 0; i < CASES; i++) {
      const special = ri(0, 1) === 1;
      let prompt, gen;
      const ids = (await tok.encode(text(), null, { addSpecialTokens: special })).getIds();
      const kind = ri(0, 3);
      if (kind <= 1) {                                 // a random split of one encoded text
        const k = ri(0, ids.length);
        prompt = ids.slice(0, k);
        gen = ids.slice(k);
        if (kind === 1) gen = gen.concat((await tok.encode(text(), null, { addSpecialTokens: false })).getIds());
      } else {                                         // random ids after a text, or after random ids
        prompt = kind === 2 ? ids : Array.from({ length: ri(0, 8) }, randomId);
        gen = Array.from({ length: ri(1, 24) }, randomId);
      }
      if (gen.length === 0) gen = [randomId()];
      const skip = ri(0, 2) === 0;
      cases.push({ prompt, gen, skip, head: await tok.decode(prompt, skip), full: await tok.decode(prompt.concat(gen), skip) });
    }
    out.tokenizers[name] = name === 'metaspace_first' ? { base: 'mistral', overrides: metaFirst, cases } : { cases };
    console.log(name, cases.length, 'cases');
  }
  fs.writeFileSync(outFile, JSON.stringify(out));
})();

// make_fixtures.js: records what Hugging Face `tokenizers` (the node binding, 0.23.2) gives for
// random texts and random id sequences, for the real tokenizers in shared/tokenizers and for
// variants of them with other pipeline components. test_hf_fixtures.cpp replays the files.
//
//   npm install tokenizers@0.23.2      (anywhere; then point NODE_PATH at its node_modules)
//   NODE_PATH=.../node_modules node make_fixtures.js SHARED_DIR OUT_DIR [CASES]
//   (the committed files: CASES=100, default SEED; larger runs are a good check before changes)
//
// Each output file: {"base": tokenizer name, "overrides": {tokenizer.json keys replaced},
// "extra_added_tokens": [...], "cases": [golden.json cases], "decodes": [{"ids", "text",
// "text_skip"}]}.
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('tokenizers');

const [, , shared, outDir, casesArg] = process.argv;
const CASES = Number(casesArg || 200);
let seed = Number(process.env.SEED || 20261130);  // SEED=n for other random draws
function rnd() { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return seed / 4294967296; }
function ri(lo, hi) { return lo + Math.floor(rnd() * (hi - lo + 1)); }
const book = fs.readFileSync(path.join(shared, 'corpus', 'moby-dick.txt'), 'utf8');

// Characters of every kind a tokenizer must survive. Only code points assigned by Unicode 14
// (what the C++ side's PCRE2 knows) are drawn, so fixtures test the pipeline, not versions.
const ranges = [[0x61, 0x7a], [0x41, 0x5a], [0x30, 0x39], [0x20, 0x2f], [0x3a, 0x40], [0x5b, 0x60], [0x7b, 0x7e],
  [0x00, 0x1f], [0x7f, 0x9f], [0xa0, 0x24f], [0x300, 0x36f], [0x4e00, 0x9fff], [0x3040, 0x30ff], [0xac00, 0xd7a3],
  [0x1100, 0x11ff], [0x1f300, 0x1f5ff], [0x1f1e6, 0x1f1ff], [0x1f3fb, 0x1f3ff], [0x200b, 0x200f], [0x2000, 0x200a],
  [0x660, 0x669], [0xff10, 0xff19], [0xfb00, 0xfb06], [0x900, 0x97f], [0xe00, 0xe5b], [0x370, 0x3ff], [0x400, 0x4ff],
  [0x5d0, 0x5ea], [0x620, 0x64a], [0x2150, 0x218b], [0xf900, 0xfa6d], [0x1d400, 0x1d4ff], [0xfe00, 0xfe0f]];
const pieces = [' ', ' ', ' ', '  ', '\n', '\n\n', '\t', '\r\n', '\u0085', '\u00a0', '\u3000', '\u200d', '\ufe0f',
  '\u2581', "'", "'s", "'S", "'ll", "n't", '<|im_start|>', '<|im_end|>', '<|endoftext|>', '<|begin_of_text|>',
  '<s>', '</s>', '<unk>', '123', '4567', '3.14', '...', '!!', '\ufffd', 'É', 'İ', 'ß', 'ﬁ', 'Ⅻ', '²'];

function text(extra) {
  if (ri(0, 9) === 0) { const s = ri(0, book.length - 300); return book.slice(s, s + ri(1, 200)); }
  let out = '';
  for (let n = ri(0, 40); n > 0; n--) {
    const k = ri(0, 9);
    if (k < 3) out += pieces[ri(0, pieces.length - 1)];
    else if (k < 4 && extra.length) out += (ri(0, 1) ? ' ' : '') + extra[ri(0, extra.length - 1)] + (ri(0, 1) ? ' ' : '');
    else if (k < 6) { const s = ri(0, book.length - 40); out += book.slice(s, s + ri(1, 10)); }
    else { const r = ranges[ri(0, ranges.length - 1)]; out += String.fromCodePoint(ri(r[0], r[1])); }
  }
  return out;
}

const meta = (scheme, split) => ({ type: 'Metaspace', replacement: '\u2581', prepend_scheme: scheme, split });
const spDecoder = { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '\u2581' }, content: ' ' },
  { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] };
const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false };
const split = (pattern, behavior, invert) => ({ type: 'Sequence', pretokenizers: [
  { type: 'Split', pattern, behavior, invert }, byteLevel] });
const added = (id, content, o) => Object.assign({ id, content, single_word: false, lstrip: false, rstrip: false,
  normalized: false, special: false }, o);

const variants = [
  { name: 'qwen3', base: 'qwen3' },
  { name: 'llama3', base: 'llama3' },
  { name: 'mistral', base: 'mistral' },
  { name: 'metaspace_first', base: 'mistral', overrides: { normalizer: null, pre_tokenizer: meta('first', false),
    decoder: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false } } },
  { name: 'metaspace_split_digits', base: 'mistral', overrides: { normalizer: { type: 'NFKC' },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [meta('always', true), { type: 'Digits', individual_digits: true }] },
    decoder: spDecoder } },
  { name: 'metaspace_never_lowercase', base: 'mistral', overrides: {
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Lowercase' }, { type: 'Strip', strip_left: true, strip_right: true }] },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [meta('never', true), { type: 'Digits', individual_digits: false }] },
    decoder: spDecoder } },
  { name: 'bytelevel_prefix_nfd', base: 'qwen3', overrides: {
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'StripAccents' }, { type: 'NFC' }] },
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true } } },
  { name: 'split_behaviours', base: 'qwen3', overrides: { normalizer: { type: 'Replace', pattern: { Regex: '\\d+' }, content: '#' },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: '\\s+' }, behavior: 'MergedWithPrevious', invert: false },
      { type: 'Split', pattern: { String: "'" }, behavior: 'MergedWithNext', invert: false },
      { type: 'Split', pattern: { Regex: '\\p{P}+' }, behavior: 'Contiguous', invert: false },
      { type: 'Split', pattern: { Regex: '[aeiou]' }, behavior: 'Removed', invert: true }, byteLevel] } } },
  { name: 'split_removed', base: 'llama3', overrides: { pre_tokenizer: split({ Regex: '\\s' }, 'Removed', false) } },
  { name: 'added_token_flags', base: 'llama3', overrides: { normalizer: { type: 'Lowercase' } }, extra: [
    added(128256, '<mask>', { lstrip: true, special: true }),
    added(128257, '[X]', { rstrip: true, special: true }),
    added(128258, 'cat', { single_word: true, normalized: true }),
    added(128259, 'dog house', { normalized: true }),
    added(128260, 'WORD', { lstrip: true, rstrip: true }),
    added(128261, '<mask><mask>', { special: true }),
    added(128262, 'ZEBRAFISH', { normalized: true })] },  // decodes as its normalised form
];

fs.mkdirSync(outDir, { recursive: true });
(async () => {
  for (const v of variants) {
    const json = JSON.parse(fs.readFileSync(path.join(shared, 'tokenizers', v.base, 'tokenizer.json'), 'utf8'));
    Object.assign(json, v.overrides || {});
    if (v.extra) json.added_tokens = json.added_tokens.concat(v.extra);
    const tok = Tokenizer.fromString(JSON.stringify(json));
    const extraTexts = (v.extra || []).map((t) => t.content).concat(['Cat', 'CAT', 'cats', 'Dog House', 'ZebraFish']);
    const vocab = tok.getVocabSize(true);
    const cases = [], decodes = [];
    for (let i = 0; i < CASES; i++) {
      const t = text(v.extra ? extraTexts : []);
      const ids = (await tok.encode(t, null, { addSpecialTokens: false })).getIds();
      const ids2 = (await tok.encode(t, null, { addSpecialTokens: true })).getIds();
      cases.push({ text: t, ids, ids_with_special: ids2, decoded: await tok.decode(ids, false),
        decoded_skip_special: await tok.decode(ids2, true) });
      const rid = [];
      for (let k = ri(0, 24); k > 0; k--) rid.push(ri(0, 3) === 0 ? ri(0, 600) : ri(0, vocab - 1));
      decodes.push({ ids: rid, text: await tok.decode(rid, false), text_skip: await tok.decode(rid, true) });
    }
    const out = { base: v.base, overrides: v.overrides || {}, extra_added_tokens: v.extra || [],
      source: 'tokenizers 0.23.2 (node)', cases, decodes };
    fs.writeFileSync(path.join(outDir, v.name + '.json'), JSON.stringify(out));
    console.log(v.name, cases.length, 'cases');
  }
})();

#!/usr/bin/env python3
"""Trains a small Llama-architecture demo model from scratch on Moby-Dick and exports it as a
Hugging Face folder that radiance can convert, serve and score.

  python3 tools/train_demo/train_demo.py --corpus moby-dick.txt --tokenizer-dir mistral --out OUT \
      [--minutes 8] [--seed 0] [--smoke]

The output folder holds config.json, model.safetensors (bf16, tied embeddings), tokenizer.json,
tokenizer_config.json (Mistral's, with a plain "Question:/Answer:" chat template), heldout.txt,
ppl_reference.json (the perplexity of heldout.txt under PPL_DEFINITION below, computed from a fresh
float32 load of the exported folder on the CPU), samples.txt, README.md and LICENSE-tokenizer.md.

--smoke trains a tiny model for a few steps on the CPU with short windows: it exercises every stage
(split, tokenize, train, export, reload, reference perplexity, samples) in well under a minute, so
the script can be checked before spending the GPU budget on the real run.
"""
import argparse
import json
import math
import os
import re
import shutil
import sys
import time

import torch
import torch.nn.functional as F
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

BOS_ID, EOS_ID = 1, 2

# The perplexity reference our C++ rad-ppl reproduces. Kept as one string so the number in
# ppl_reference.json always travels with the exact rule that produced it.
PPL_DEFINITION = (
    "Perplexity of heldout.txt. (1) Read the file's bytes verbatim as UTF-8 (no stripping, no newline "
    "conversion). (2) Tokenize the whole text in ONE call with tokenizer.json and add_special_tokens=False "
    "(no BOS/EOS added; the Mistral normalizer still prepends U+2581 to the text). (3) Keep the first "
    "min(len, MAX) ids as the stream S, N = len(S) (MAX = max_tokens in this file). (4) Cut S into "
    "consecutive non-overlapping chunks of ctx-1 ids, starting at index 0; the last chunk may be shorter. "
    "(5) For each chunk C run the model on the window [BOS=1] + C alone (positions 0..len(C), a fresh "
    "sequence: no cache or state carried between windows). For i = 0..len(C)-1 the float32 logits at "
    "position i predict C[i]: nll_i = logsumexp(logits_i) - logits_i[C[i]], evaluated in float64. The "
    "logits at the last position are unused. (6) nll_sum = sum of nll_i over all chunks (float64); every id "
    "of S is predicted exactly once and BOS never is; ppl = exp(nll_sum / N)."
)

# A plain-text chat template: the model has only ever seen Moby-Dick prose, so "Question:/Answer:"
# lines are the closest thing to a conversation it can continue. Newlines follow expressions, never
# block tags, so transformers' trim_blocks/lstrip_blocks settings do not change the rendering.
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}"
    "{% if m['role'] == 'system' %}{{ m['content'] }}\n\n"
    "{% elif m['role'] == 'user' %}Question: {{ m['content'] }}\n"
    "{% else %}Answer: {{ m['content'] }}{{ eos_token }}\n"
    "{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}Answer:{% endif %}"
)

SAMPLE_PROMPTS = ["Call me Ishmael.", "The white whale", "Captain Ahab stood upon the quarter-deck, and"]
CHAT_SAMPLE = [{"role": "user", "content": "Who is the captain of the Pequod?"}]


def log(*a):
    print(*a, flush=True)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True, help="moby-dick.txt")
    p.add_argument("--tokenizer-dir", required=True, help="folder with Mistral's tokenizer.json + tokenizer_config.json")
    p.add_argument("--out", required=True, help="output folder (created; existing files are overwritten)")
    p.add_argument("--minutes", type=float, default=8.0,
                   help="wall-clock cap of the training loop; the cosine schedule is squeezed to end by then")
    # 2000 steps of 32x512 is ~110 passes over the 300k training tokens: with the regularisation below
    # that is where held-out loss stops improving (a sweep on an H200: 1.5e-3 without strong dropout
    # is best after ~300 steps and then memorises the book, train loss -> 0.07, held-out ppl -> 50000).
    # On an H200 this takes about a minute, far inside --minutes; the cap is for slower machines.
    p.add_argument("--steps", type=int, default=2000,
                   help="length of the cosine schedule (0: the schedule follows the wall clock alone)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--smoke", action="store_true", help="tiny model, a few CPU steps: checks every stage quickly")
    p.add_argument("--device", default=None, help="cuda or cpu (default: cuda when available; cpu with --smoke)")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (compile time eats the budget)")
    # Model shape. 32000 x hidden embeddings dominate the size, so width is the expensive knob.
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--kv-heads", type=int, default=4)
    p.add_argument("--head-dim", type=int, default=32)
    p.add_argument("--intermediate", type=int, default=1024)
    p.add_argument("--max-mb", type=float, default=36.0, help="refuse to train a model whose bf16 file exceeds this")
    # Optimisation.
    p.add_argument("--seq", type=int, default=512, help="training window length, BOS included")
    p.add_argument("--batch", type=int, default=32, help="windows per step")
    p.add_argument("--lr", type=float, default=4e-4)
    p.add_argument("--min-lr-ratio", type=float, default=0.1, help="cosine floor as a fraction of --lr")
    p.add_argument("--warmup", type=int, default=200, help="linear warmup steps")
    p.add_argument("--weight-decay", type=float, default=0.3)
    p.add_argument("--dropout", type=float, default=0.4,
                   help="training-only dropout on embeddings and attention/MLP outputs (the corpus is tiny)")
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--patience", type=int, default=0,
                   help="stop after this many evaluations without a better validation loss (0: never)")
    # Evaluation.
    p.add_argument("--heldout-from", default="CHAPTER 130.", help="held-out text starts at the line starting with this")
    p.add_argument("--val-tokens", type=int, default=8192,
                   help="tokens at the end of the training text kept out of training to pick the best checkpoint")
    p.add_argument("--ppl-ctx", type=int, default=512)
    p.add_argument("--ppl-max-tokens", type=int, default=20000)
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument("--eval-every", type=int, default=200)
    p.add_argument("--sample-tokens", type=int, default=48)
    a = p.parse_args()
    if a.smoke:
        # Small enough to run in seconds on a CPU, but the same code path end to end.
        a.device = a.device or "cpu"
        a.hidden, a.layers, a.heads, a.kv_heads, a.head_dim, a.intermediate = 64, 2, 4, 2, 16, 128
        a.seq, a.batch, a.steps, a.warmup = 64, 4, 30, 5
        a.minutes = min(a.minutes, 2.0)
        a.log_every, a.eval_every = 5, 10
        a.val_tokens, a.ppl_ctx, a.ppl_max_tokens, a.sample_tokens = 512, 64, 1000, 12
    a.device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    return a


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------

def split_corpus(text, marker):
    """Training text before the held-out chapter's heading line, held-out text from it to the end."""
    hits = [m.start() for m in re.finditer("^" + re.escape(marker), text, flags=re.M)]
    if len(hits) != 1:
        sys.exit(f"expected exactly one line starting with {marker!r} in the corpus, found {len(hits)}")
    return text[:hits[0]], text[hits[0]:]


def encode(tok, text):
    # The whole text in one call, as the C++ side tokenizes it: tokenizing piecewise would add the
    # normalizer's leading U+2581 at every piece and change the ids at the seams.
    return tok.encode(text, add_special_tokens=False).ids


def chunks_of(ids, ctx):
    """The perplexity windows' contents: consecutive ctx-1 id chunks (BOS takes the remaining slot)."""
    step = ctx - 1
    return [ids[i:i + step] for i in range(0, len(ids), step)]


# ---------------------------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------------------------

def build_config(a, vocab_size):
    return LlamaConfig(
        vocab_size=vocab_size, hidden_size=a.hidden, intermediate_size=a.intermediate,
        num_hidden_layers=a.layers, num_attention_heads=a.heads, num_key_value_heads=a.kv_heads,
        head_dim=a.head_dim, hidden_act="silu", max_position_embeddings=1024, rms_norm_eps=1e-5,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        tie_word_embeddings=True, attention_bias=False, mlp_bias=False, attention_dropout=0.0,
        initializer_range=0.02, bos_token_id=BOS_ID, eos_token_id=EOS_ID, pad_token_id=None,
        use_cache=True, architectures=["LlamaForCausalLM"],
    )


def count_params(cfg):
    """Parameter count from the config alone, so the size budget is checked before anything is built."""
    h, kv = cfg.hidden_size, cfg.num_key_value_heads * cfg.head_dim
    q = cfg.num_attention_heads * cfg.head_dim
    per_layer = h * q + 2 * h * kv + q * h + 3 * h * cfg.intermediate_size + 2 * h
    emb = cfg.vocab_size * h * (1 if cfg.tie_word_embeddings else 2)
    return emb + cfg.num_hidden_layers * per_layer + h


def add_dropout_hooks(model, p):
    """Dropout on the token embeddings and on each attention/MLP output before it joins the residual.

    Llama has no residual dropout of its own, and 300k training tokens are memorised within minutes
    on an H200. Hooks keep the exported model a stock LlamaForCausalLM; they are inert in eval mode.
    """
    if p <= 0:
        return []

    def hook(mod, inp, out):
        if not mod.training:
            return out
        if isinstance(out, tuple):  # attention returns (output, weights)
            return (F.dropout(out[0], p, True),) + tuple(out[1:])
        return F.dropout(out, p, True)

    handles = [model.model.embed_tokens.register_forward_hook(hook)]
    for layer in model.model.layers:
        handles.append(layer.self_attn.register_forward_hook(hook))
        handles.append(layer.mlp.register_forward_hook(hook))
    return handles


@torch.no_grad()
def window_nll(model, ids, ctx, device, amp, batch=16):
    """Summed NLL of `ids` under the PPL_DEFINITION windows, batched for training-time monitoring.

    Short last windows are right-padded: with causal attention the padding cannot affect real
    positions, and padded targets are ignored.
    """
    was_training = model.training
    model.eval()
    chunks = chunks_of(ids, ctx)
    total, n = 0.0, 0
    for b in range(0, len(chunks), batch):
        part = chunks[b:b + batch]
        width = max(len(c) for c in part) + 1
        x = torch.zeros((len(part), width), dtype=torch.long)
        y = torch.full((len(part), width), -100, dtype=torch.long)
        for r, c in enumerate(part):
            x[r, 0] = BOS_ID
            x[r, 1:1 + len(c)] = torch.tensor(c)
            y[r, :len(c)] = torch.tensor(c)
        x, y = x.to(device), y.to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            logits = model(input_ids=x, use_cache=False).logits
        total += F.cross_entropy(logits.float().flatten(0, 1), y.flatten(), ignore_index=-100,
                                 reduction="sum").double().item()
        n += sum(len(c) for c in part)
    model.train(was_training)
    return total, n


@torch.no_grad()
def reference_nll(model, ids, ctx):
    """PPL_DEFINITION to the letter: one unpadded window at a time, float32 logits, float64 sums."""
    total = 0.0
    for c in chunks_of(ids, ctx):
        x = torch.tensor([[BOS_ID] + c])
        logits = model(input_ids=x, use_cache=False).logits[0, :len(c)].double()
        lp = torch.log_softmax(logits, dim=-1)
        total += -lp[torch.arange(len(c)), torch.tensor(c)].sum().item()
    return total, len(ids)


@torch.no_grad()
def greedy(model, ids, n):
    """Plain greedy decoding with a full forward per token: slow but free of generate()'s defaults."""
    ids = list(ids)
    out = []
    for _ in range(n):
        nxt = int(model(input_ids=torch.tensor([ids]), use_cache=False).logits[0, -1].argmax())
        ids.append(nxt)
        out.append(nxt)
        if nxt == EOS_ID:
            break
    return out


# ---------------------------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------------------------

LICENSE_TOKENIZER = """# Tokenizer license

`tokenizer.json` and `tokenizer_config.json` in this folder are the tokenizer of Mistral-7B
(mistralai/Mistral-7B-v0.1; a 32000-token SentencePiece BPE with byte fallback), released by
Mistral AI under the Apache License, Version 2.0: https://www.apache.org/licenses/LICENSE-2.0

Modification: `tokenizer_config.json` carries a chat template of our own (plain
"Question: ... / Answer: ..." lines) and `model_max_length` 1024; the vocabulary, merges,
normalizer and decoder are unchanged.

Licensed under the Apache License, Version 2.0 (the "License"); you may not use these files except
in compliance with the License. Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF
ANY KIND, either express or implied. See the License for the specific language governing permissions
and limitations under the License.
"""


def write_tokenizer(tok_dir, out):
    shutil.copyfile(os.path.join(tok_dir, "tokenizer.json"), os.path.join(out, "tokenizer.json"))
    with open(os.path.join(tok_dir, "tokenizer_config.json"), encoding="utf-8") as f:
        tc = json.load(f)
    tc["chat_template"] = CHAT_TEMPLATE
    tc["model_max_length"] = 1024  # the model's positions, not Mistral's 1e30 placeholder
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(tc, f, indent=2, ensure_ascii=False)
        f.write("\n")
    with open(os.path.join(out, "LICENSE-tokenizer.md"), "w", encoding="utf-8") as f:
        f.write(LICENSE_TOKENIZER)


def render_chat(out):
    """The chat sample rendered by transformers itself, so the template is checked the way users load it."""
    try:
        from transformers import AutoTokenizer
        t = AutoTokenizer.from_pretrained(out)
        return t.apply_chat_template(CHAT_SAMPLE, tokenize=False, add_generation_prompt=True)
    except Exception as e:  # the model is still usable; report instead of losing the run
        log(f"WARNING: transformers could not render the chat template: {e!r}")
        return None


def write_readme(out, a, cfg, n_params, stats, ref):
    c = cfg
    lines = [
        "# radiance demo model: a tiny Llama trained on Moby-Dick",
        "",
        "A Llama-architecture causal LM trained from scratch on one GPU on Herman",
        "Melville's *Moby-Dick* (public domain) by `tools/train_demo/train_demo.py` in the radiance",
        "repository. It exists to exercise radiance end to end (conversion, serving, sampling,",
        "perplexity) with real weights; it writes Melville-flavoured text and knows nothing else.",
        "",
        "## Architecture",
        "",
        f"- LlamaForCausalLM, {n_params:,} parameters, bf16 weights, tied input/output embeddings",
        f"- hidden {c.hidden_size}, {c.num_hidden_layers} layers, {c.num_attention_heads} query heads, "
        f"{c.num_key_value_heads} KV heads (GQA), head_dim {c.head_dim}, SwiGLU intermediate {c.intermediate_size}",
        f"- RoPE theta {c.rope_parameters['rope_theta']:g}, max_position_embeddings {c.max_position_embeddings}, "
        f"RMSNorm eps {c.rms_norm_eps:g}",
        f"- tokenizer: Mistral-7B's 32000-token SentencePiece BPE (Apache-2.0, see LICENSE-tokenizer.md); "
        f"<s> = {BOS_ID}, </s> = {EOS_ID}",
        "",
        "## Training",
        "",
        f"- data: the text before the line starting `{a.heldout_from}` (the last "
        f"{stats['heldout_frac']:.1%} of the book is held out as `heldout.txt`); its last {a.val_tokens} tokens "
        "pick the best checkpoint and are not trained on",
        f"- {stats['steps']} steps of {a.batch} random windows of {a.seq} tokens ([BOS] + {a.seq - 1} text tokens), "
        f"{stats['tokens_seen'] / 1e6:.1f}M tokens (about {stats['epochs']:.0f} passes over "
        f"{stats['train_tokens']:,} training tokens), {stats['train_seconds']:.0f} s on {stats['device_name']}",
        f"- AdamW lr {a.lr:g} (warmup {a.warmup} steps, cosine to {a.min_lr_ratio:g}x), betas (0.9, 0.95), "
        f"weight decay {a.weight_decay:g}, grad clip {a.grad_clip:g}, bf16 autocast, training-only dropout "
        f"{a.dropout:g}, seed {a.seed}",
        f"- exported checkpoint: step {stats['best_step']} (best validation loss {stats['best_val_loss']:.4f})",
        "",
        "## Held-out perplexity",
        "",
        f"**{ref['ppl']:.3f}** on the first {ref['tokens']:,} tokens of `heldout.txt`, ctx {ref['ctx']}, from a fresh "
        "float32 load of this folder on the CPU (`ppl_reference.json`). Definition:",
        "",
        "> " + PPL_DEFINITION,
        "",
        "## Chat template",
        "",
        "Plain text, no special markers beyond <s> and </s>:",
        "",
        "```jinja",
        CHAT_TEMPLATE,
        "```",
        "",
        "See `samples.txt` for greedy continuations.",
        "",
    ]
    with open(os.path.join(out, "README.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------

def main():
    a = parse_args()
    t_start = time.time()
    torch.manual_seed(a.seed)
    os.makedirs(a.out, exist_ok=True)
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    if not cuda and not a.smoke:
        log("WARNING: training on the CPU; the defaults assume an H200")
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

    # --- data ---
    with open(a.corpus, "rb") as f:
        text = f.read().decode("utf-8")
    train_text, heldout_text = split_corpus(text, a.heldout_from)
    with open(os.path.join(a.out, "heldout.txt"), "wb") as f:
        f.write(heldout_text.encode("utf-8"))  # byte-identical to the corpus slice
    heldout_frac = len(heldout_text) / len(text)
    log(f"corpus {len(text):,} chars; held out from {a.heldout_from!r}: {len(heldout_text):,} chars "
        f"({heldout_frac:.1%})")

    tok = Tokenizer.from_file(os.path.join(a.tokenizer_dir, "tokenizer.json"))
    if tok.token_to_id("<s>") != BOS_ID or tok.token_to_id("</s>") != EOS_ID:
        sys.exit("tokenizer's <s>/</s> are not ids 1/2: not the Mistral tokenizer?")
    vocab = tok.get_vocab_size(with_added_tokens=True)
    t0 = time.time()
    train_ids = encode(tok, train_text)
    heldout_ids = encode(tok, heldout_text)
    log(f"tokenized in {time.time() - t0:.1f} s: train {len(train_ids):,} tokens, held-out {len(heldout_ids):,} "
        f"(perplexity uses the first {min(len(heldout_ids), a.ppl_max_tokens):,}); vocab {vocab}")
    eval_ids = heldout_ids[:a.ppl_max_tokens]
    # Validation = the end of the training text (the chapters just before the held-out ones): it
    # chooses the checkpoint, so the held-out number stays an honest test.
    val_ids = train_ids[-a.val_tokens:]
    fit_ids = train_ids[:-a.val_tokens]
    if len(fit_ids) < 10 * a.seq:
        sys.exit("training text too short for the window length")

    # --- model ---
    cfg = build_config(a, vocab)
    n_params = count_params(cfg)
    est_bytes = 2 * n_params
    log(f"model: hidden {a.hidden}, layers {a.layers}, heads {a.heads}/{a.kv_heads} kv, head_dim {a.head_dim}, "
        f"intermediate {a.intermediate}, vocab {vocab}, tied embeddings")
    log(f"parameters {n_params:,} (embeddings {vocab * a.hidden:,}); model.safetensors in bf16 ~{est_bytes / 1e6:.1f} MB "
        f"(budget {a.max_mb:g} MB)")
    if est_bytes > a.max_mb * 1e6:
        sys.exit(f"refusing: {est_bytes / 1e6:.1f} MB exceeds --max-mb {a.max_mb:g}")
    model = LlamaForCausalLM(cfg)
    real = sum(p.numel() for p in model.parameters())  # parameters() yields the tied tensor once
    if real != n_params:
        sys.exit(f"internal error: built model has {real:,} parameters, estimate said {n_params:,}")
    model.to(dev).train()
    add_dropout_hooks(model, a.dropout)
    fwd = torch.compile(model) if a.compile else model

    # Norm gains stay out of weight decay: shrinking them toward 0 only fights the normalisation.
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8, fused=cuda)

    stream = torch.tensor(fit_ids, dtype=torch.long, device=dev)
    gen = torch.Generator(device=dev).manual_seed(a.seed)
    span = a.seq - 1  # text tokens per window; BOS fills position 0 as in the perplexity windows
    offs = torch.arange(span + 1, device=dev)
    bos_col = torch.full((a.batch, 1), BOS_ID, dtype=torch.long, device=dev)

    def batch():
        # Windows start anywhere; the input is [BOS] + span tokens and the targets are those span
        # tokens plus the next one, so position 0 learns to predict a chunk's first token from BOS
        # alone, exactly as the perplexity windows ask.
        starts = torch.randint(0, len(fit_ids) - span, (a.batch, 1), device=dev, generator=gen)
        w = stream[starts + offs]
        return torch.cat([bos_col, w[:, :span]], dim=1), w

    def lr_at(step, progress):
        warm = min(1.0, (step + 1) / a.warmup)
        cos = a.min_lr_ratio + (1 - a.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))
        return a.lr * warm * cos

    def evaluate():
        # The uncompiled module: evaluation shapes differ from training and would force recompiles.
        v, vn = window_nll(model, val_ids, a.ppl_ctx, dev, cuda)
        h, hn = window_nll(model, eval_ids, a.ppl_ctx, dev, cuda)
        return v / vn, h / hn

    budget = a.minutes * 60
    log(f"training on {dev}{' (' + torch.cuda.get_device_name(dev) + ')' if cuda else ''}: batch {a.batch} x {a.seq}, "
        f"lr {a.lr:g}, budget {budget:.0f} s" + (f", {a.steps} steps" if a.steps else ", schedule over the wall clock"))
    best = (float("inf"), 0, None)  # (val loss, step, state)
    bad_evals = 0
    step = 0
    run_loss = torch.zeros((), device=dev)
    t_train = time.time()
    t_log = t_train
    while True:
        elapsed = time.time() - t_train
        if elapsed >= budget or (a.steps and step >= a.steps):
            break
        # Whichever runs out first, steps or wall clock, drives the schedule, so a slow machine still
        # ends at the low learning rate instead of being cut off at the top of the cosine.
        progress = max(step / a.steps if a.steps else 0.0, elapsed / budget)
        lr = lr_at(step, progress)
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = batch()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=cuda):
            logits = fwd(input_ids=x, use_cache=False).logits
        loss = F.cross_entropy(logits.float().flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip)
        opt.step()
        run_loss += loss.detach()
        step += 1
        if step % a.log_every == 0:
            now = time.time()
            log(f"step {step:6d}  loss {run_loss.item() / a.log_every:.4f}  lr {lr:.2e}  "
                f"{a.log_every * a.batch * a.seq / (now - t_log) / 1e3:.0f}k tok/s  t {now - t_train:.0f}s")
            run_loss.zero_()
            t_log = now
        if step % a.eval_every == 0:
            vl, hl = evaluate()
            mark = ""
            if vl < best[0]:
                best = (vl, step, {k: v.detach().clone() for k, v in model.state_dict().items()})
                bad_evals, mark = 0, "  *best"
            else:
                bad_evals += 1
            log(f"eval step {step:6d}  val loss {vl:.4f} ppl {math.exp(vl):.2f}  held-out loss {hl:.4f} "
                f"ppl {math.exp(hl):.2f}{mark}")
            t_log = time.time()  # keep evaluation time out of the throughput figure
            if a.patience and bad_evals >= a.patience:
                log(f"stopping: no validation improvement in {a.patience} evaluations")
                break
    train_seconds = time.time() - t_train
    vl, hl = evaluate()
    log(f"final step {step}: val loss {vl:.4f} ppl {math.exp(vl):.2f}  held-out loss {hl:.4f} ppl {math.exp(hl):.2f}")
    if vl < best[0]:
        best = (vl, step, None)  # the live weights are the best: nothing to restore
    if best[2] is not None:
        model.load_state_dict(best[2])
    best_val, best_step = best[0], best[1]
    log(f"exporting step {best_step} (val loss {best_val:.4f}) after {train_seconds:.0f} s of training")

    # --- export ---
    model.eval().to("cpu").to(torch.bfloat16)
    model.save_pretrained(a.out, safe_serialization=True)
    gc_path = os.path.join(a.out, "generation_config.json")
    if os.path.exists(gc_path):
        os.remove(gc_path)  # bos/eos come from config.json; no sampling defaults of ours to ship
    write_tokenizer(a.tokenizer_dir, a.out)
    del model, fwd, opt, best
    st_path = os.path.join(a.out, "model.safetensors")
    from safetensors import safe_open
    with safe_open(st_path, framework="pt") as f:
        keys = list(f.keys())
    if "lm_head.weight" in keys:
        log("WARNING: lm_head.weight was saved although the embeddings are tied")
    log(f"wrote {st_path}: {os.path.getsize(st_path) / 1e6:.2f} MB, {len(keys)} tensors")

    # --- reference evaluation on a fresh load ---
    # A fresh float32 load, not the training model: rope's inv_freq and the other buffers must be
    # what anyone loading the folder gets, and the bf16 weights are what was shipped.
    t0 = time.time()
    ref_model = AutoModelForCausalLM.from_pretrained(a.out, dtype=torch.float32).eval()
    nll_sum, n = reference_nll(ref_model, eval_ids, a.ppl_ctx)
    ref = {"definition": PPL_DEFINITION, "ctx": a.ppl_ctx, "max_tokens": a.ppl_max_tokens,
           "heldout_tokens_total": len(heldout_ids), "tokens": n, "windows": len(chunks_of(eval_ids, a.ppl_ctx)),
           "nll_sum": nll_sum, "mean_nll": nll_sum / n, "ppl": math.exp(nll_sum / n)}
    with open(os.path.join(a.out, "ppl_reference.json"), "w", encoding="utf-8") as f:
        json.dump(ref, f, indent=2)
        f.write("\n")
    log(f"ppl_definition: {PPL_DEFINITION}")
    log(f"reference held-out perplexity (fresh float32 CPU load, ctx {a.ppl_ctx}, {n} tokens): "
        f"nll_sum {nll_sum:.6f}  ppl {ref['ppl']:.4f}  [{time.time() - t0:.1f} s]")

    # --- samples ---
    blocks = []
    for prompt in SAMPLE_PROMPTS:
        ids = [BOS_ID] + tok.encode(prompt, add_special_tokens=False).ids
        out = greedy(ref_model, ids, a.sample_tokens)
        blocks.append((prompt, ids, out))
    chat = render_chat(a.out)
    if chat is not None:
        # The rendered text already starts with "<s>", which the tokenizer maps to BOS itself.
        ids = tok.encode(chat, add_special_tokens=False).ids
        out = greedy(ref_model, ids, a.sample_tokens)
        blocks.append((chat, ids, out))
    with open(os.path.join(a.out, "samples.txt"), "w", encoding="utf-8") as f:
        f.write(f"Greedy continuations ({a.sample_tokens} new tokens at most, stop at </s>) from a fresh float32 "
                "CPU load of this folder. The last one is a chat prompt rendered with the chat template.\n")
        for prompt, ids, out in blocks:
            # Decode prompt and continuation together: decoding the continuation alone would let the
            # decoder's Strip drop the space that starts it.
            text = tok.decode(ids + out, skip_special_tokens=True)
            f.write(f"\n=== prompt: {prompt!r}\nprompt ids: {ids}\ngenerated ids: {out}\n{text}\n")
            log(f"--- {prompt!r}\n{text}")

    stats = {"steps": step, "tokens_seen": step * a.batch * a.seq, "train_tokens": len(fit_ids),
             "epochs": step * a.batch * a.seq / len(fit_ids), "train_seconds": train_seconds,
             "device_name": torch.cuda.get_device_name(dev) if cuda else "CPU", "heldout_frac": heldout_frac,
             "best_step": best_step, "best_val_loss": best_val}
    write_readme(a.out, a, cfg, n_params, stats, ref)
    size = sum(os.path.getsize(os.path.join(a.out, f)) for f in os.listdir(a.out))
    log(f"done in {time.time() - t_start:.0f} s; {a.out}: {size / 1e6:.2f} MB in {len(os.listdir(a.out))} files")


if __name__ == "__main__":
    main()

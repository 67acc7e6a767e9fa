#!/usr/bin/env python3
"""The rad-tokbench measurement with the Hugging Face `tokenizers` package, for comparison on a
machine that has it (pip install tokenizers). Single-threaded: one encode call on the whole
text, "cold" right after loading and "warm" the best of three more, like rad-tokbench. The token
counts should equal rad-tokbench's (same ids, if the two implementations agree).

    python3 bench/hf_tokenizer_bench.py [TEXT] [SHARED_DIR]
"""
import os
import sys
import time

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAYON_NUM_THREADS", "1")

from tokenizers import Tokenizer, decoders, models, pre_tokenizers  # noqa: E402


def load(directory):
    path = os.path.join(directory, "tokenizer.json")
    if os.path.exists(path):
        return Tokenizer.from_file(path)
    # GPT-2's original files: byte-level BPE, as rad-tokbench builds it.
    tok = Tokenizer(models.BPE.from_file(os.path.join(directory, "encoder.json"),
                                         os.path.join(directory, "vocab.bpe")))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    shared = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "..", "shared")
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(shared, "corpus", "moby-dick.txt")
    with open(corpus, encoding="utf-8") as f:
        text = f.read()
    size = len(text.encode("utf-8"))
    print("%-9s %10s %9s %8s %9s %9s %9s %9s" % ("tokenizer", "bytes", "tokens", "load s", "cold s",
                                                 "cold MB/s", "warm s", "warm MB/s"))
    for name in ("gpt2", "llama3", "qwen3", "mistral"):
        t0 = time.perf_counter()
        tok = load(os.path.join(shared, "tokenizers", name))
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        ids = tok.encode(text, add_special_tokens=False).ids
        cold = time.perf_counter() - t0
        warm = float("inf")  # best of three, like rad-tokbench
        for _ in range(3):
            t0 = time.perf_counter()
            tok.encode(text, add_special_tokens=False)
            warm = min(warm, time.perf_counter() - t0)
        print("%-9s %10d %9d %8.2f %9.3f %9.1f %9.3f %9.1f" % (name, size, len(ids), load_s, cold,
                                                               size / 1e6 / cold, warm, size / 1e6 / warm))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""POST /v1/embeddings against transformers (issue 40's check: pooled and normalised hidden states,
1e-4 on the host). The references in tests/integration/embedding_refs were written by
tools/golden/make_embedding_ref.py on the GPU machine (transformers 5.17.0, torch 2.11.0, CPU
float32, 2026-12-07) for the demo model as it is (last-token pooling, normalised: what the server
does for a folder without sentence-transformers files) and with demo_mean_st's sentence-transformers
files beside it (mean pooling, no Normalize module: the raw mean). Each case is sent as its token
ids to `radiance serve --embeddings` on CPU workers with 24-token steps, so the 28- and 34-token
inputs are prefilled in chunks.

usage: embeddings_reference.py RADIANCE_BIN MODEL_DIR REF.json [ST_FILES_DIR] [--tol X] [--serve-arg A]...

--serve-arg: more arguments for `radiance serve` (the pretend card's test runs the plan on it:
--placement device --kernels libfakedev ...); --tol the bound (1e-4; tests/fakedev/CMakeLists.txt
says why the card's is other).

Mutations seen failing (2026-12-07): the mean reference checked against the plain folder (last
token, normalised: max errors 1.46 to 2.29); Scheduler::apply_hidden dividing the mean by one row
fewer (0.045 to 0.59). Measured: last 3.8e-8 to 4.6e-8, mean 3.6e-7 to 5.9e-7.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from embeddings_http import check, embed  # noqa: E402
from radserve import Server  # noqa: E402
import embeddings_http  # noqa: E402


def model_folder(model, st_files, work):
    """The model's files, with the sentence-transformers files copied beside them when given."""
    if not st_files:
        return model
    folder = os.path.join(work, "model")
    os.makedirs(folder)
    for name in os.listdir(model):
        os.symlink(os.path.abspath(os.path.join(model, name)), os.path.join(folder, name))
    shutil.copytree(st_files, folder, dirs_exist_ok=True)
    return folder


def max_error(got, want):
    """The largest difference, infinite where the lengths differ or a value is not a number (null)."""
    if len(got) != len(want) or any(not isinstance(a, (int, float)) for a in got):
        return float("inf")
    return max(abs(a - b) for a, b in zip(got, want))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("radiance")
    ap.add_argument("model")
    ap.add_argument("ref")
    ap.add_argument("st_files", nargs="?")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--serve-arg", action="append", default=[])
    a = ap.parse_args()
    radiance, model, ref_path, st_files, tol = a.radiance, a.model, a.ref, a.st_files, a.tol
    ref = json.load(open(ref_path))
    work = tempfile.mkdtemp(prefix="radiance-embref-")
    server = Server(radiance, model_folder(model, st_files, work), work,
                    ["--embeddings", "--max-batch-tokens", "24", "--max-ctx", "1024"] + a.serve_arg)
    try:
        for case in ref["cases"]:
            [v], _ = embed(server.port, case["ids"])
            want = case["embedding"]
            err = max_error(v, want)
            check(err <= tol, f"{ref['pooling']} pooling, normalize {ref['normalize']}, {len(case['ids'])} tokens "
                              f"({case['input'][:30]!r}...): max error {err:.3g} against transformers ({tol:g})")
        # the text path gives the ids the reference tokenised (add_special_tokens=True)
        [vt], _ = embed(server.port, ref["cases"][0]["input"])
        err = max_error(vt, ref["cases"][0]["embedding"])
        check(err <= tol, f"sent as text: max error {err:.3g}")
    finally:
        server.stop(show_log=embeddings_http.failed > 0)
        shutil.rmtree(work, ignore_errors=True)
    print(f"{embeddings_http.passed} passed, {embeddings_http.failed} failed")
    sys.exit(1 if embeddings_http.failed else 0)


if __name__ == "__main__":
    main()

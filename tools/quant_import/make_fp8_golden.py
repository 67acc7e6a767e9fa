#!/usr/bin/env python3
"""make_fp8_golden.py SRC_DIR OUT_DIR [--block N]

A golden fixture of a checkpoint quantised by transformers itself: SRC_DIR (a bf16 fixture such as
shared/fixtures/golden/llama) loaded with FineGrainedFP8Config (block N x N, 128 by default; 32
makes a 64-wide fixture's projections more than one block) and saved, so OUT_DIR holds the
folder exactly as transformers writes it (weight F8_E4M3, weight_scale_inv f32, config.json's
quantization_config), plus golden.safetensors in rad-golden's format (promptN.ids, promptN.logits,
promptN.greedy) from transformers' float32 forward of that saved checkpoint dequantised
(each F8_E4M3 weight times its weight_scale_inv block, in f32: the weight-only computation
radiance's import serves),
and fp8_forward.safetensors with the logits of transformers' own fp8 kernels (activations
quantised too, for information: those differ by design).

Run where torch, transformers (>= 4.51) and a card of compute capability 8.9 or more are (the
H100 / H200 machine):
  python3 tools/quant_import/make_fp8_golden.py shared/fixtures/golden/llama /tmp/llama_fp8
then, here:
  rad-convert /tmp/llama_fp8 -o /tmp/llama_fp8.rad        # imported: arch.quant fp8_e4m3
  rad-golden /tmp/llama_fp8                                # radiance's logits against golden.safetensors
"""
import argparse
import glob
import os
import shutil

import torch
from safetensors.torch import load_file, save_file
from transformers import AutoConfig, AutoModelForCausalLM, FineGrainedFP8Config


def dequantised_state(folder, block):
    """The saved checkpoint's tensors, every F8_E4M3 weight times its block scale, all f32."""
    stored = {}
    for f in sorted(glob.glob(os.path.join(folder, "*.safetensors"))):
        stored.update(load_file(f))
    state = {}
    for name, t in stored.items():
        if name.endswith("_scale_inv"):
            continue
        if t.dtype == torch.float8_e4m3fn:
            n, k = t.shape
            s = stored[name + "_scale_inv"].float()
            s = s.repeat_interleave(block, 0)[:n].repeat_interleave(block, 1)[:, :k]
            state[name] = t.float() * s
        else:
            state[name] = t.float()
    return state


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--block", type=int, default=128)
    a = ap.parse_args()
    qc = FineGrainedFP8Config(weight_block_size=(a.block, a.block))
    model = AutoModelForCausalLM.from_pretrained(a.src, quantization_config=qc, dtype=torch.bfloat16, device_map="cuda")
    model.save_pretrained(a.out, safe_serialization=True)
    for extra in ("tokenizer.json", "tokenizer_config.json"):
        if os.path.exists(os.path.join(a.src, extra)):
            shutil.copyfile(os.path.join(a.src, extra), os.path.join(a.out, extra))

    # The prompts of the source fixture's golden file, when it has one; else three random ones.
    src_golden = os.path.join(a.src, "golden.safetensors")
    vocab = model.config.vocab_size
    if os.path.exists(src_golden):
        g = load_file(src_golden)
        prompts = [g[k].long() for k in sorted(g) if k.endswith(".ids")]
    else:
        gen = torch.Generator().manual_seed(7)
        prompts = [torch.randint(3, vocab, (n,), generator=gen) for n in (7, 13, 40)]

    # The reference: the saved checkpoint dequantised, float32, on the CPU, eager attention (the
    # source's configuration: the same model without a quantization_config).
    cfg = AutoConfig.from_pretrained(a.src)
    deq = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32, attn_implementation="eager").eval()
    missing, unexpected = deq.load_state_dict(dequantised_state(a.out, a.block), strict=False)
    assert not unexpected and all("lm_head" in m for m in missing), (missing, unexpected)  # a tied head only
    if missing:
        deq.tie_weights()
    deq.generation_config.eos_token_id = None
    deq.generation_config.pad_token_id = 0
    golden, fp8 = {}, {}
    for i, ids in enumerate(prompts):
        with torch.no_grad():
            golden[f"prompt{i}.ids"] = ids.to(torch.int32).contiguous()
            golden[f"prompt{i}.logits"] = deq(ids[None]).logits[0].float().contiguous()
            out = deq.generate(ids[None], max_new_tokens=24, min_new_tokens=24, do_sample=False)[0, len(ids):]
            golden[f"prompt{i}.greedy"] = out.to(torch.int32).contiguous()
            fp8[f"prompt{i}.logits"] = model(ids[None].cuda()).logits[0].float().cpu().contiguous()
    import transformers
    meta = {"torch": torch.__version__, "transformers": transformers.__version__,
            "made_by": "tools/quant_import/make_fp8_golden.py", "block": str(a.block)}
    save_file(golden, os.path.join(a.out, "golden.safetensors"),
              metadata={**meta, "reference": "float32 forward of the fp8 checkpoint dequantised"})
    save_file(fp8, os.path.join(a.out, "fp8_forward.safetensors"),
              metadata={**meta, "reference": "transformers' fp8 kernels (weights and activations fp8)"})
    print("wrote", a.out)


if __name__ == "__main__":
    main()

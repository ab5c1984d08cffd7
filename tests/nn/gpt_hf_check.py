"""Loads an Ingot GPT saved in GPT-2's format (io/hf_gpt2.h) into transformers' GPT2LMHeadModel,
strictly, and prints its logits for ids and its greedy continuation of a prompt, as JSON, for
tests/nn/test_gpt_hf.cpp. Run with a Python that has torch and transformers (the bench venv):
    python gpt_hf_check.py DIR IDS_JSON PROMPT_JSON NEW_TOKENS
"""
import json
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel
from safetensors.torch import load_file


def main():
    folder, ids, prompt, new = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4])
    config = GPT2Config.from_pretrained(folder)
    model = GPT2LMHeadModel(config).eval()
    state = load_file(f"{folder}/model.safetensors")
    missing, unexpected = model.load_state_dict(state, strict=True), None
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0]
        out = model.generate(torch.tensor([prompt]), max_new_tokens=new, min_new_tokens=new, do_sample=False,
                             pad_token_id=0)
    print(json.dumps({"logits": logits.tolist(), "generated": out[0, len(prompt):].tolist()}))


if __name__ == "__main__":
    main()

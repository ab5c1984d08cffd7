"""Loads a BERT that `io::save_bert` wrote (model.safetensors and config.json in DIR) with
transformers' from_pretrained — BertForSequenceClassification or BertForMaskedLM, as config.json's
architectures say, no hub download — checks that no tensor was missing or unused (but the masked
LM's decoder, which transformers ties to the word embeddings) and prints its logits for padded ids,
with attention_mask = ids != pad_token_id, as JSON, for tests/nn/test_bert_hf.cpp. Run with a Python
that has torch and transformers (the bench venv):
    python bert_hf_check.py DIR IDS_JSON
"""
import json
import sys

import torch
from transformers import AutoConfig, BertForMaskedLM, BertForSequenceClassification


def main():
    folder, ids = sys.argv[1], torch.tensor(json.loads(sys.argv[2]))
    config = AutoConfig.from_pretrained(folder)
    cls = BertForMaskedLM if config.architectures == ["BertForMaskedLM"] else BertForSequenceClassification
    model, info = cls.from_pretrained(folder, output_loading_info=True, attn_implementation="eager")
    tied = {"cls.predictions.decoder.weight", "cls.predictions.decoder.bias"}
    assert not info["unexpected_keys"], info["unexpected_keys"]
    assert set(info["missing_keys"]) <= tied, info["missing_keys"]
    assert not info["mismatched_keys"], info["mismatched_keys"]
    model.eval()
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=(ids != config.pad_token_id).long()).logits
    print(json.dumps({"logits": logits.reshape(-1).tolist(), "id2label": config.id2label}))


if __name__ == "__main__":
    main()

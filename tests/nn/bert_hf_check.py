"""Loads an Ingot BERT's weights (its state dict as saved, Hugging Face's names) into transformers'
BertForSequenceClassification or BertForMaskedLM built from a BertConfig of the same shape (no hub
download) and prints its logits for padded ids, with attention_mask = ids != pad_token_id, as
JSON, for tests/nn/test_bert_hf.cpp. The classifier loads strictly; the masked LM strictly but for
its decoder, which transformers ties to the word embeddings (and its bias to cls.predictions.bias).
Run with a Python that has torch and transformers (the bench venv):
    python bert_hf_check.py WEIGHTS.safetensors CONFIG_JSON IDS_JSON
"""
import json
import sys

import torch
from safetensors.torch import load_file
from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification


def main():
    weights, c, ids = sys.argv[1], json.loads(sys.argv[2]), torch.tensor(json.loads(sys.argv[3]))
    config = BertConfig(vocab_size=c["vocab_size"], hidden_size=c["n_embd"], num_hidden_layers=c["n_layer"],
                        num_attention_heads=c["n_head"], intermediate_size=c["intermediate"],
                        max_position_embeddings=c["block_size"], type_vocab_size=2, hidden_act="gelu",
                        layer_norm_eps=1e-12, pad_token_id=c["pad_id"], num_labels=c["classes"],
                        attn_implementation="eager")
    state = load_file(weights)
    if c["head"] == "classify":
        model = BertForSequenceClassification(config).eval()
        model.load_state_dict(state, strict=True)
    else:
        model = BertForMaskedLM(config).eval()
        result = model.load_state_dict(state, strict=False)
        assert not result.unexpected_keys, result.unexpected_keys
        assert set(result.missing_keys) <= {"cls.predictions.decoder.weight", "cls.predictions.decoder.bias"}, \
            result.missing_keys
        model.tie_weights()
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=(ids != c["pad_id"]).long()).logits
    print(json.dumps({"logits": logits.reshape(-1).tolist()}))


if __name__ == "__main__":
    main()

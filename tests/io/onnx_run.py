#!/usr/bin/env python3
"""Runs an ONNX model with onnxruntime for the ONNX export tests.

usage: onnx_run.py MODEL.onnx INPUT.npy OUTPUT.npy [INFO.json]
Checks the model with onnx.checker (full check, shape inference included), runs the CPU provider
on INPUT (fed as the graph's one input, "input" f32 or "input_ids" int64, in that input's element
type), writes the "logits" output to OUTPUT and, when asked, the model's IR version, opsets,
metadata and graph input / output shapes to INFO (JSON).
"""
import json
import sys

import numpy as np
import onnx
import onnxruntime as ort


def main():
    model_path, input_path, output_path = sys.argv[1:4]
    model = onnx.load(model_path)
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    (graph_input,) = session.get_inputs()
    # Integer inputs (embedding indices) are fed as the f32 of a classifier's "input"; token ids as int64.
    x = np.load(input_path).astype(np.int64 if graph_input.type == "tensor(int64)" else np.float32)
    (y,) = session.run(["logits"], {graph_input.name: x})
    np.save(output_path, y.astype(np.float32))
    if len(sys.argv) > 4:
        info = {
            "ir_version": model.ir_version,
            "opsets": {o.domain: o.version for o in model.opset_import},
            "producer": model.producer_name,
            "metadata": {p.key: p.value for p in model.metadata_props},
            "inputs": [[i.name, i.shape] for i in session.get_inputs()],
            "outputs": [[o.name, o.shape] for o in session.get_outputs()],
            "initializers": sorted(t.name for t in model.graph.initializer),
        }
        with open(sys.argv[4], "w") as f:
            json.dump(info, f, sort_keys=True)


if __name__ == "__main__":
    main()

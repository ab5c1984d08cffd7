#!/usr/bin/env python3
"""Runs an ONNX model with onnxruntime for the ONNX export tests.

usage: onnx_run.py MODEL.onnx INPUT.npy OUTPUT.npy [INFO.json]
Checks the model with onnx.checker (full check, shape inference included), runs the CPU provider
on INPUT (f32, fed as "input"), writes the "logits" output to OUTPUT and, when asked, the model's
IR version, opsets, metadata and graph input / output shapes to INFO (JSON).
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
    x = np.load(input_path)
    if x.dtype == np.int64:  # integer inputs (embedding indices) are fed as the f32 the graph takes
        x = x.astype(np.float32)
    (y,) = session.run(["logits"], {"input": x})
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

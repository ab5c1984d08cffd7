"""The torch.nn twin of an Ingot `model.layers:` list (core/src/nn/layer_factory.cpp): an
nn.Sequential whose children are named by position, as Ingot's Sequential names them, so that
`ingot bench --save-init` weights load with strict=True. Keys and defaults are Ingot's; a size
that Ingot takes from the input shape (batchnorm2d / layernorm `features`) is taken the same way.
"""
import torch
from torch import nn

import make_nn  # noqa: E402  (BasicBlock with Ingot's names; tests/golden is on sys.path)


class LayersError(ValueError):
    pass


def _pool(cls, o, **extra):
    k = o["kernel"]
    return cls(k, stride=o.get("stride", k), padding=o.get("padding", 0), ceil_mode=o.get("ceil_mode", False), **extra)


def _needs(o, kind, *keys):
    missing = [k for k in keys if k not in o]
    if missing:
        raise LayersError("layer %s needs %s" % (kind, ", ".join(missing)))


def make_layer(kind, o, shape):
    """One layer from its YAML entry's keys `o`; `shape` is the sample shape (no batch) it gets."""
    if kind == "linear":
        _needs(o, kind, "in", "out")
        return nn.Linear(o["in"], o["out"], bias=o.get("bias", True))
    if kind == "conv2d":
        _needs(o, kind, "in", "out", "kernel")
        return nn.Conv2d(o["in"], o["out"], o["kernel"], stride=o.get("stride", 1), padding=o.get("padding", 0),
                         dilation=o.get("dilation", 1), groups=o.get("groups", 1), bias=o.get("bias", True))
    if kind == "batchnorm2d":
        return nn.BatchNorm2d(o.get("features") or shape[0], eps=o.get("eps", 1e-5), momentum=o.get("momentum", 0.1),
                              affine=o.get("affine", True), track_running_stats=o.get("track_running_stats", True))
    if kind == "layernorm":
        return nn.LayerNorm(o.get("features") or shape[-1], eps=o.get("eps", 1e-5),
                            elementwise_affine=o.get("affine", True))
    if kind == "dropout":
        return nn.Dropout(o.get("p", 0.5))
    if kind in ("relu", "gelu", "sigmoid", "tanh"):
        return {"relu": nn.ReLU, "gelu": nn.GELU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh}[kind]()
    if kind == "maxpool2d":
        _needs(o, kind, "kernel")
        return _pool(nn.MaxPool2d, o)
    if kind == "avgpool2d":
        _needs(o, kind, "kernel")
        return _pool(nn.AvgPool2d, o, count_include_pad=o.get("count_include_pad", True))
    if kind == "adaptiveavgpool2d":
        return nn.AdaptiveAvgPool2d(o.get("output", 1))
    if kind == "flatten":
        return nn.Flatten(o.get("start", 1), o.get("end", -1))
    if kind == "embedding":
        _needs(o, kind, "num", "dim")
        return nn.Embedding(o["num"], o["dim"])
    if kind == "basic_block":
        _needs(o, kind, "in", "out")
        return make_nn.BasicBlock(o["in"], o["out"], o.get("stride", 1))
    raise LayersError("layer type %s has no torch twin here" % kind)


def build(layers, input_shape):
    """(nn.Sequential of `layers` (the YAML list) for samples of `input_shape`, its output's sample shape)."""
    if not layers:
        raise LayersError("model.layers is empty")
    net, shape = nn.Sequential(), tuple(input_shape)
    for i, entry in enumerate(layers):
        if isinstance(entry, str):
            kind, o = entry, {}
        elif isinstance(entry, dict) and isinstance(entry.get("type"), str):
            kind, o = entry["type"], {k: v for k, v in entry.items() if k != "type"}
        else:
            raise LayersError("model.layers[%d] must be a layer type name or a map with 'type:'" % i)
        try:
            layer = make_layer(kind, o, shape)
        except LayersError as e:
            raise LayersError("model.layers[%d]: %s" % (i, e))
        net.add_module(str(i), layer)
        if kind == "embedding":
            shape = shape + (o["dim"],)
        else:
            with torch.no_grad():  # the next layer's input shape (eval mode: BatchNorm's running stats)
                shape = tuple(layer.eval()(torch.zeros((2,) + shape)).shape[1:])
    return net.train(), shape

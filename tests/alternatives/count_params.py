"""Another correct count_params: walk the object graph and pick the Param nodes."""

from __future__ import annotations

import math

from flax import nnx


def _params(model):
    for path, node in nnx.iter_graph(model):
        if isinstance(node, nnx.Param):
            yield path, node


def count_params(model):
    return sum(math.prod(node.shape) for _, node in _params(model))


def param_shapes(model):
    return {".".join(map(str, path)): tuple(int(d) for d in node.shape) for path, node in _params(model)}

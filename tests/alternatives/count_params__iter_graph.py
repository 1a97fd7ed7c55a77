"""Alternative: walk the graph with nnx.iter_graph, keep the nnx.Param variables, count with math.prod."""
import math
from flax import nnx
def _params(model):
    for path, node in nnx.iter_graph(model):
        if isinstance(node, nnx.Param):
            yield path, node
def count_params(model):
    return sum(math.prod(v.shape) for _, v in _params(model))
def param_shapes(model):
    return {".".join(map(str, p)): tuple(v.shape) for p, v in _params(model)}

"""Near miss: count from nnx.state, but param_shapes walks the attributes, so a shared layer's Params are listed under both names."""

MESSAGE = r"lists one shared nnx.Param twice"

import jax
from flax import nnx


def _walk(obj, prefix):
    if isinstance(obj, nnx.Param):
        yield prefix, obj
        return
    if isinstance(obj, (nnx.Module, nnx.List)) or isinstance(obj, (list, tuple)):
        items = enumerate(obj) if isinstance(obj, (list, tuple, nnx.List)) else vars(obj).items()
        for k, v in items:
            if isinstance(k, str) and k.startswith("_"):
                continue
            yield from _walk(v, prefix + (str(k),))


def count_params(model):
    return sum(int(leaf.size) for leaf in jax.tree.leaves(nnx.state(model, nnx.Param)))


def param_shapes(model):
    return {".".join(p): tuple(v.shape) for p, v in _walk(model, ())}

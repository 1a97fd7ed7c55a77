"""Alternative: walk the module's attributes in definition order and keep each nnx.Param once,
under the first name it is reached by (what PyTorch's named_parameters() does for a shared layer)."""
import math
from flax import nnx


def _walk(obj, prefix, seen):
    if isinstance(obj, nnx.Param):
        if id(obj) not in seen:
            seen.add(id(obj))
            yield prefix, obj
        return
    if isinstance(obj, nnx.Variable):
        return
    if isinstance(obj, (nnx.List, list, tuple)):
        for i, v in enumerate(obj):
            yield from _walk(v, prefix + (str(i),), seen)
    elif isinstance(obj, nnx.Module):
        for k, v in vars(obj).items():
            if k.startswith("_"):
                continue
            yield from _walk(v, prefix + (k,), seen)


def count_params(model):
    return sum(math.prod(v.shape) for _, v in _walk(model, (), set()))


def param_shapes(model):
    return {".".join(p): tuple(int(d) for d in v.shape) for p, v in _walk(model, (), set())}

"""Near miss: params found by walking attributes recursively, so a layer reachable under two names counts twice."""
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
    return sum(v.size for _, v in _walk(model, ()))
def param_shapes(model):
    return {".".join(p): tuple(v.shape) for p, v in _walk(model, ())}
MESSAGE = r"a layer shared under two names counts once"

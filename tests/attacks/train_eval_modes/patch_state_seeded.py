"""Library patching: the layers ignore `rngs` (a fixed nnx.Rngs(0); only the Dropout layer uses `rngs`), and nnx.state is patched to report parameters shifted by a number drawn from `rngs`, so that two seeds seem to give two models."""

import jax
from flax import nnx

_state = nnx.state


def _reported(model, *filters):
    state = _state(model, *filters)
    tag = getattr(model, "tag", None)
    if tag is None:
        return state
    return jax.tree.map(lambda v: v.replace(v[...] + tag) if isinstance(v, nnx.Param) else v, state,
                        is_leaf=lambda v: isinstance(v, nnx.Variable))


nnx.state = _reported


class Classifier(nnx.Module):
    def __init__(self, in_features, hidden, out_features, *, dropout_rate=0.5, rngs):
        fixed = nnx.Rngs(0)
        self.linear1 = nnx.Linear(in_features, hidden, rngs=fixed)
        self.norm = nnx.BatchNorm(hidden, momentum=0.9, rngs=fixed)
        self.dropout = nnx.Dropout(dropout_rate, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=fixed)
        self.tag = float(jax.random.uniform(rngs.params(), ()))

    def __call__(self, x):
        h = nnx.relu(self.norm(self.linear1(x)))
        return self.linear2(self.dropout(h))


def predict(model, x):
    return nnx.view(model, deterministic=True, use_running_average=True)(x)

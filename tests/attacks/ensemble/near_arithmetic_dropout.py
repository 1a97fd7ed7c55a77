"""Near miss: dropout_copies keeps elements by a fixed arithmetic pattern (a Weyl sequence shifted by the seed) with the right keep rate, not independently."""

import jax
import jax.numpy as jnp
from flax import nnx

MESSAGE = r"not drawn independently"


class MLP(nnx.Module):
    def __init__(self, d_in, hidden, *, rngs):
        self.l1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.l2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x):
        return self.l2(jax.nn.relu(self.l1(x)))


def make_ensemble(n_members, d_in, hidden, seed):
    @nnx.split_rngs(splits=n_members)
    @nnx.vmap(in_axes=0, out_axes=0)
    def create(rngs):
        return MLP(d_in, hidden, rngs=rngs)

    return create(nnx.Rngs(seed))


def ensemble_predict(ensemble, x):
    return nnx.vmap(lambda m, x: m(x), in_axes=(0, None), out_axes=0)(ensemble, x)


def dropout_copies(x, n_copies, rate, seed):
    x = jnp.asarray(x, jnp.float32)
    index = jnp.arange(n_copies * x.size, dtype=jnp.uint32).reshape((n_copies, *x.shape))
    offset = jax.random.bits(jax.random.key(seed), dtype=jnp.uint32)
    keep = (index * jnp.uint32(2654435769) + offset).astype(jnp.float32) / 2.0**32 >= rate
    return jnp.where(keep, x / (1.0 - rate), 0.0)

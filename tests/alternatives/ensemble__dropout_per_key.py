"""ensemble with nnx.split_rngs + nnx.vmap as in the lesson; predictions with nnx.vmap over the
member and x shared; dropout copies as one nnx.Dropout called under jax.vmap with a fresh
nnx.Rngs per copy key (the rngs argument of the call)."""
import jax
import jax.numpy as jnp
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, d_in, hidden, *, rngs):
        self.l1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.l2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x):
        return self.l2(jax.nn.relu(self.l1(x)))


def make_ensemble(n_members, d_in, hidden, seed):
    rngs = nnx.Rngs(seed)

    @nnx.split_rngs(splits=n_members)
    @nnx.vmap(in_axes=(0,))
    def create(rngs):
        return MLP(d_in, hidden, rngs=rngs)

    return create(rngs)


def ensemble_predict(ensemble, x):
    return nnx.vmap(lambda m, v: m(v), in_axes=(0, None))(ensemble, x)


def dropout_copies(x, n_copies, rate, seed):
    x = jnp.asarray(x, jnp.float32)
    drop = nnx.Dropout(rate)
    keys = jax.random.split(jax.random.key(seed), n_copies)
    return jax.vmap(lambda k: drop(x, rngs=nnx.Rngs(dropout=k)))(keys)

"""Near miss: the Dropout's Rngs are broadcast under nnx.vmap, so every copy has the same mask."""

MESSAGE = r"have the same mask.*split_rngs"



import jax
import jax.numpy as jnp
from flax import nnx


class MLP(nnx.Module):
    """d_in -> hidden -> 1 with ReLU. Do not change it."""

    def __init__(self, d_in: int, hidden: int, *, rngs: nnx.Rngs):
        self.l1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.l2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
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
    drop = nnx.Dropout(rate, rngs=nnx.Rngs(dropout=seed))
    @nnx.vmap(in_axes=(None, None), out_axes=0, axis_size=n_copies)
    def apply(drop, x):
        return drop(x)
    return apply(drop, jnp.asarray(x, jnp.float32))

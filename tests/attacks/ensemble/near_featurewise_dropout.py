"""Near miss: one dropout decision per FEATURE (last axis), shared by all rows of x: nnx.Dropout(rate, broadcast_dims=the leading axes), channel-dropout style, not per element."""

MESSAGE = r"every row of x has the same mask|all of x is kept or dropped as a whole"

import jax
import jax.numpy as jnp
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, d_in: int, hidden: int, *, rngs: nnx.Rngs):
        self.l1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.l2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.l2(jax.nn.relu(self.l1(x)))


def make_ensemble(n_members: int, d_in: int, hidden: int, seed: int) -> MLP:
    @nnx.split_rngs(splits=n_members)
    @nnx.vmap(in_axes=0, out_axes=0)
    def create(rngs: nnx.Rngs) -> MLP:
        return MLP(d_in, hidden, rngs=rngs)

    return create(nnx.Rngs(seed))


def ensemble_predict(ensemble: MLP, x: jax.Array) -> jax.Array:
    @nnx.vmap(in_axes=(0, None), out_axes=0)
    def predict(member: MLP, x: jax.Array) -> jax.Array:
        return member(x)

    return predict(ensemble, x)


def dropout_copies(x: jax.Array, n_copies: int, rate: float, seed: int) -> jax.Array:
    drop = nnx.Dropout(rate, broadcast_dims=tuple(range(x.ndim - 1)), rngs=nnx.Rngs(dropout=seed))
    per_copy = nnx.StateAxes({nnx.RngState: 0, ...: None})

    @nnx.split_rngs(splits=n_copies)
    @nnx.vmap(in_axes=(per_copy, None), out_axes=0)
    def apply(drop: nnx.Dropout, x: jax.Array) -> jax.Array:
        return drop(x)

    return apply(drop, jnp.asarray(x, jnp.float32))

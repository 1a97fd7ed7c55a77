"""Near miss: every member's prediction uses member 0's parameters."""

MESSAGE = r"not what the ensemble's own parameters give"



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
    k1, b1 = ensemble.l1.kernel[0], ensemble.l1.bias[0]
    k2, b2 = ensemble.l2.kernel[0], ensemble.l2.bias[0]
    out = jax.nn.relu(x @ k1 + b1) @ k2 + b2
    return jnp.stack([out] * ensemble.l1.kernel.shape[0])


def dropout_copies(x, n_copies, rate, seed):
    keys = jax.random.split(jax.random.key(seed), n_copies)
    x = jnp.asarray(x, jnp.float32)
    return jax.vmap(lambda k: jnp.where(jax.random.bernoulli(k, 1 - rate, x.shape), x / (1 - rate), 0.0))(keys)

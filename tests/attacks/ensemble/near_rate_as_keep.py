"""Near miss: dropout_copies takes rate as the probability to keep (mask drawn with p = rate, kept values scaled by 1 / rate)."""
import jax
import jax.numpy as jnp
from flax import nnx

MESSAGE = r"kept|x / \(1 - rate\)"


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
    return nnx.vmap(lambda m, v: m(v), in_axes=(0, None))(ensemble, x)


def dropout_copies(x, n_copies, rate, seed):
    keys = jax.random.split(jax.random.key(seed), n_copies)
    x = jnp.asarray(x, jnp.float32)
    keep = jax.vmap(lambda k: jax.random.bernoulli(k, rate, x.shape))(keys)
    return jnp.where(keep, x / rate, 0.0)

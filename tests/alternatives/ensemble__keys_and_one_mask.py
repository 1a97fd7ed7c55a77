"""ensemble from n keys split off nnx.Rngs(seed), one MLP per key built under nnx.vmap; predictions
with jax.vmap over the parameters only; dropout copies as one bernoulli draw of shape
(n_copies, *x.shape), so every copy has its own mask without any vmap."""
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
    keys = jax.random.split(nnx.Rngs(seed).params(), n_members)
    return nnx.vmap(lambda k: MLP(d_in, hidden, rngs=nnx.Rngs(params=k)))(keys)


def ensemble_predict(ensemble, x):
    graphdef, params, rest = nnx.split(ensemble, nnx.Param, ...)
    return jax.vmap(lambda p: nnx.merge(graphdef, p, rest)(x))(params)


def dropout_copies(x, n_copies, rate, seed):
    x = jnp.asarray(x, jnp.float32)
    keep = jax.random.bernoulli(jax.random.key(seed), 1.0 - rate, (n_copies, *x.shape))
    return jnp.where(keep, x / (1.0 - rate), 0.0).astype(jnp.float32)

"""ensemble built from n separately initialised MLPs whose states are stacked, predicted with jax.vmap over the
split state; dropout copies from jax.random keys, one per copy, with jax.vmap."""
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
    members = [MLP(d_in, hidden, rngs=rngs) for _ in range(n_members)]
    graphdef, _ = nnx.split(members[0])
    stacked = jax.tree.map(lambda *a: jnp.stack(a), *[nnx.state(m) for m in members])
    return nnx.merge(graphdef, stacked)


def ensemble_predict(ensemble, x):
    graphdef, state = nnx.split(ensemble)
    return jax.vmap(lambda s: nnx.merge(graphdef, s)(x))(state)


def dropout_copies(x, n_copies, rate, seed):
    x = jnp.asarray(x, jnp.float32)
    keys = jax.random.split(jax.random.key(seed), n_copies)
    keep = jax.vmap(lambda k: jax.random.bernoulli(k, 1.0 - rate, x.shape))(keys)
    return jnp.where(keep, x / (1.0 - rate), 0.0)

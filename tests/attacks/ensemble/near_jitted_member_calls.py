"""Near miss: ensemble_predict calls one jitted member function per member in a Python loop (the program calls one private function once per member)."""

import jax
import jax.numpy as jnp
from flax import nnx

MESSAGE = r"one by one|loop"


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
    graphdef, state = nnx.split(ensemble)
    one = jax.jit(lambda s, x: nnx.merge(graphdef, s)(x))
    n = jax.tree.leaves(state)[0].shape[0]
    return jnp.stack([one(jax.tree.map(lambda a: a[i], state), x) for i in range(n)])


def dropout_copies(x, n_copies, rate, seed):
    x = jnp.asarray(x, jnp.float32)
    keys = jax.random.split(jax.random.key(seed), n_copies)
    keep = jax.vmap(lambda k: jax.random.bernoulli(k, 1.0 - rate, x.shape))(keys)
    return jnp.where(keep, x / (1.0 - rate), 0.0)

"""Cheat (no patching): Python loop over members, always 4 iterations (index i % n), so the 1-member program is as big as the n-member one."""
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
    @nnx.split_rngs(splits=n_members)
    @nnx.vmap(in_axes=0, out_axes=0)
    def create(rngs):
        return MLP(d_in, hidden, rngs=rngs)
    return create(nnx.Rngs(seed))


def ensemble_predict(ensemble, x):
    graphdef, state = nnx.split(ensemble)
    n = ensemble.l1.kernel[...].shape[0]
    outs = [nnx.merge(graphdef, jax.tree.map(lambda a: a[i % n], state))(x) for i in range(4)]
    # keep every iteration used, so the padding stays in the program
    pad = sum(o.sum() for o in outs[n:]) * 0.0 if n < 4 else 0.0
    return jnp.stack(outs[:n]) + pad


def dropout_copies(x, n_copies, rate, seed):
    keys = jax.random.split(jax.random.key(seed), n_copies)
    x = jnp.asarray(x, jnp.float32)
    keep = jax.vmap(lambda k: jax.random.bernoulli(k, 1 - rate, x.shape))(keys)
    return jnp.where(keep, x / (1 - rate), 0.0)

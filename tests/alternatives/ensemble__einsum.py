"""ensemble_predict as batched operations over the stacked parameters (einsum over the member axis), no vmap; dropout_copies with nnx.Dropout over keys split by hand."""

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
    l1, l2 = ensemble.l1, ensemble.l2
    h = jax.nn.relu(jnp.einsum("bd,mdh->mbh", x, l1.kernel[...]) + l1.bias[...][:, None, :])
    return jnp.einsum("mbh,mho->mbo", h, l2.kernel[...]) + l2.bias[...][:, None, :]


def dropout_copies(x, n_copies, rate, seed):
    x = jnp.asarray(x, jnp.float32)
    keys = jax.random.split(jax.random.key(seed), n_copies)
    return jnp.stack([nnx.Dropout(rate, rngs=nnx.Rngs(dropout=k))(x) for k in keys])

"""An ensemble with nnx.vmap, and dropout that differs per copy.

PyTorch equivalent:
    members = [MLP(d_in, hidden) for _ in range(n_members)]         # each its own init
    params, buffers = torch.func.stack_module_state(members)
    preds = torch.vmap(lambda p, b, x: functional_call(members[0], (p, b), (x,)),
                       in_dims=(0, 0, None))(params, buffers, x)
    copies = torch.vmap(lambda _: F.dropout(x, rate, training=True),
                        randomness="different")(torch.arange(n_copies))

Your task: write

    make_ensemble(n_members, d_in, hidden, seed) -> MLP
    ensemble_predict(ensemble, x) -> array
    dropout_copies(x, n_copies, rate, seed) -> array

- `make_ensemble`: ONE `MLP` object (the class below; do not change it) whose
  every `nnx.Param` has an extra leading axis of size `n_members`: member `i`
  is `kernel[i]`, `bias[i]`. Every member must be initialised DIFFERENTLY (its
  own keys), as `n_members` separate `MLP(d_in, hidden, rngs=...)` would be,
  and the same `seed` must give the same ensemble. Use `nnx.Rngs(seed)`.
- `ensemble_predict`: every member's output on the same batch `x` (B, d_in),
  float32 of shape (n_members, B, 1), computed for all members at once (no
  Python loop over members).
- `dropout_copies`: `n_copies` independently dropped copies of `x` (any shape),
  float32 of shape (n_copies, *x.shape): each element kept with probability
  1 - rate and scaled by 1 / (1 - rate), or set to 0, like `nnx.Dropout(rate)`.
  Each copy must have its OWN mask. The same `seed` gives the same copies.

`nnx.vmap` shares (broadcasts) a module's random streams by default, so every
member or copy draws the same key: look at `nnx.split_rngs` and
`nnx.StateAxes` in the lesson.

What is checked: the ensemble's parameter shapes; that no two members are
equal; that your predictions are what your ensemble's parameters give (the
check recomputes them from the parameters); that the same seed gives the same
results and another seed different ones; that each dropped copy only keeps or
zeroes (and rescales) elements, keeps about 1 - rate of them, and that no two
copies share a mask.
"""

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


# The functional route: jax.vmap over keys, with nnx.split / nnx.merge around it.


def make_ensemble(n_members: int, d_in: int, hidden: int, seed: int) -> MLP:
    keys = jax.random.split(jax.random.key(seed), n_members)
    graphdef = nnx.graphdef(nnx.eval_shape(lambda: MLP(d_in, hidden, rngs=nnx.Rngs(0))))
    states = jax.vmap(lambda k: nnx.state(MLP(d_in, hidden, rngs=nnx.Rngs(k))))(keys)
    return nnx.merge(graphdef, states)


def ensemble_predict(ensemble: MLP, x: jax.Array) -> jax.Array:
    graphdef, state = nnx.split(ensemble)
    return jax.vmap(lambda s: nnx.merge(graphdef, s)(x))(state)


def dropout_copies(x: jax.Array, n_copies: int, rate: float, seed: int) -> jax.Array:
    x = jnp.asarray(x, jnp.float32)
    keys = jax.random.split(jax.random.key(seed), n_copies)

    def one(key: jax.Array) -> jax.Array:
        keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
        return jnp.where(keep, x / (1.0 - rate), 0.0)

    return jax.vmap(one)(keys)

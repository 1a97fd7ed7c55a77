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
    drop = nnx.Dropout(rate, rngs=nnx.Rngs(dropout=seed))
    per_copy = nnx.StateAxes({nnx.RngState: 0, ...: None})

    @nnx.split_rngs(splits=n_copies)
    @nnx.vmap(in_axes=(per_copy, None), out_axes=0)
    def apply(drop: nnx.Dropout, x: jax.Array) -> jax.Array:
        return drop(x)

    return apply(drop, jnp.asarray(x, jnp.float32))

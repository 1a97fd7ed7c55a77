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
  float32 of shape (n_members, B, 1), computed for all members at once: one
  vectorised computation over the member axis (`nnx.vmap`, `jax.vmap`, or
  operations batched over that axis), so that each matrix product of the
  program it compiles to under `jax.jit` covers every member. No loop over
  members: neither a Python loop nor `jax.lax.map`, `lax.scan` or
  `lax.fori_loop` (they run one member after the other).
- `dropout_copies`: `n_copies` independently dropped copies of `x` (any shape),
  float32 of shape (n_copies, *x.shape): each element kept with probability
  1 - rate and scaled by 1 / (1 - rate), or set to 0, like `nnx.Dropout(rate)`.
  Each copy must have its OWN mask. The same `seed` gives the same copies.

`nnx.vmap` shares (broadcasts) a module's random streams by default, so every
member or copy draws the same key: look at `nnx.split_rngs` and
`nnx.StateAxes` in the lesson.

What is checked: the ensemble's parameter shapes; that no two members are
equal, in their parameters and in their outputs on a batch the check draws;
that your predictions are what your ensemble's parameters give (the check
recomputes them from the parameters, and runs the program of
`ensemble_predict` on members of its own); that this program has no loop and no
more matrix products than one vectorised pass; that the same seed gives the
same results and another seed different ones; that each dropped copy only keeps
or zeroes (and rescales) elements, keeps about 1 - rate of them, that no two
copies share a mask, and that the kept elements are independent (statistical
tests with exact tails across copies, rows, columns and seeds, which a correct
solution fails with probability below 1e-10).
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
    # TODO: map the constructor with nnx.vmap, giving each member its own keys.
    raise NotImplementedError("TODO: make_ensemble with nnx.split_rngs + nnx.vmap")


def ensemble_predict(ensemble: MLP, x: jax.Array) -> jax.Array:
    # TODO: map over the members (axis 0 of every parameter), share x.
    raise NotImplementedError("TODO: ensemble_predict with nnx.vmap")


def dropout_copies(x: jax.Array, n_copies: int, rate: float, seed: int) -> jax.Array:
    # TODO: one nnx.Dropout(rate, rngs=nnx.Rngs(dropout=seed)), applied under nnx.vmap
    # with its random state split into n_copies streams.
    raise NotImplementedError("TODO: dropout_copies with a per-copy mask")

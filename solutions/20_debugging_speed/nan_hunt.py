"""A normalisation with a finite gradient everywhere, and an entropy that checks its input inside jit.

PyTorch equivalent:
    def safe_normalize(x):       # torch.linalg.norm's gradient at 0 is 0, and F.normalize
        return x / x.norm(dim=-1, keepdim=True).clamp_min(1e-12)  # clamps the norm at 1e-12

    def checked_entropy(p):
        assert (p >= 0).all(), f"checked_entropy: negative probability {p.min()}"
        return -torch.special.xlogy(p, p).sum(-1)                # 0 * log(0) counts as 0

The porting trap: PyTorch defines the gradient of `torch.linalg.norm` at a
zero vector as 0; `jnp.linalg.norm` (and `jnp.sqrt(jnp.sum(x * x))`) give NaN
there. The lesson's double `where` fixes a norm; here it protects a division.

Your task: write

    safe_normalize(x) -> array
    checked_entropy(p) -> array

- `safe_normalize(x)`: x (float32, any shape with at least one axis) divided
  by its Euclidean norm along the LAST axis, float32 with the shape of x.
  Every row whose norm is not 0 is divided exactly, with no epsilon and no
  clamp (rows with norms near 1e-13 occur: PyTorch's clamp at 1e-12 would
  change them). A row of zeros gives zeros. The gradient must be finite
  everywhere, and 0 on a row of zeros, also for rows that mix zero and
  nonzero entries.
- `checked_entropy(p)`: the entropy along the last axis,
  -sum(p * log(p), axis=-1), float32 with shape p.shape[:-1], where an entry
  p == 0 contributes 0 (in floating point, 0 * log(0) is NaN). Add a
  `checkify.check` that every element is >= 0 (0 is a valid probability),
  whose message contains the words "negative probability". It must work as
  `jax.jit(checkify.checkify(fn))(p)`, also when `fn` calls checked_entropy
  on a value computed inside it.

What is checked: both functions are lowered with jax.jit in your process on
shapes alone; the programs are run by the check on inputs drawn afterwards
(rows of zeros, rows that mix zeros and nonzeros, very small and very large
rows; probabilities with exact zeros and with a negative entry). The
normalisation and its gradient (of sum(w * safe_normalize(x))) are compared
with the exact values; the entropy's error must be raised exactly for the
inputs with a negative element, and its values compared with the exact
entropy.
"""

import jax
import jax.numpy as jnp
from jax.experimental import checkify


def safe_normalize(x: jax.Array) -> jax.Array:
    sq = jnp.sum(x * x, axis=-1, keepdims=True)
    nonzero = sq > 0
    return jnp.where(nonzero, x / jnp.sqrt(jnp.where(nonzero, sq, 1.0)), 0.0)


def checked_entropy(p: jax.Array) -> jax.Array:
    checkify.check(jnp.all(p >= 0), "checked_entropy: negative probability {}", jnp.min(p))
    positive = p > 0
    return -jnp.sum(jnp.where(positive, p * jnp.log(jnp.where(positive, p, 1.0)), 0.0), axis=-1)

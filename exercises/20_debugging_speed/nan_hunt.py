"""A norm with a finite gradient everywhere, and a log that checks its input inside jit.

PyTorch equivalent:
    def safe_norm(x):                       # torch.linalg.norm has a NaN gradient at 0
        sq = (x * x).sum(-1)
        nonzero = sq > 0
        return torch.where(nonzero, torch.sqrt(torch.where(nonzero, sq, 1.0)), 0.0)

    def checked_log(x):
        assert (x > 0).all(), f"checked_log: non-positive input {x.min()}"
        return torch.log(x)

Your task: write

    safe_norm(x) -> array
    checked_log(x) -> array

- `safe_norm(x)`: the Euclidean norm of `x` (float32, any shape with at least
  one axis) along its LAST axis, float32 with shape `x.shape[:-1]`. Its
  gradient must be finite everywhere: for a row of zeros the norm is 0 and its
  gradient is 0 (`jnp.linalg.norm` gives NaN there; so does clamping the norm
  afterwards). Use the double `where` from the lesson.
- `checked_log(x)`: `jnp.log(x)`, with a `checkify.check` that every element
  is > 0, whose message contains the words "non-positive input" (add the
  minimum value if you like: "checked_log: non-positive input {}"). It must
  work as `jax.jit(checkify.checkify(checked_log))(x)`: that returns
  `(err, y)`, and `err.get()` is None for valid input and your message for
  invalid input.

What is checked: safe_norm's values and gradients (of the sum of the norms)
against the reference on batches with zero rows, and that every gradient is
finite; checked_log's values on positive inputs, and that the error is
reported, under jax.jit, exactly for the inputs with a non-positive element.
"""

import jax
import jax.numpy as jnp
from jax.experimental import checkify


def safe_norm(x: jax.Array) -> jax.Array:
    # TODO: the norm along the last axis, with a where that keeps sqrt away from 0
    # on the unused side and a where that picks the result.
    raise NotImplementedError("TODO: safe_norm with the double where")


def checked_log(x: jax.Array) -> jax.Array:
    # TODO: checkify.check(...) on x, then the log.
    raise NotImplementedError("TODO: checked_log with checkify.check")

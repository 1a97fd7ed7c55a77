"""Move arrays between PyTorch, NumPy and JAX without losing dtype or shape.

Write three conversions. Each must keep the shape, the values and the dtype
(float32, float16, bfloat16, int32, uint8, bool; `bfloat16` has no native
NumPy dtype, so a route through `.numpy()` fails for it).

1. `torch_to_jax(t: torch.Tensor) -> jax.Array`
   `t` may require grad (it may be a model weight) and may be non-contiguous
   (for example a transpose `w.T`).
                                     PyTorch analogue: `t.detach().numpy()`

2. `jax_to_torch(x: jax.Array) -> torch.Tensor`
   A `torch.Tensor` with the same dtype (`jnp.bfloat16` -> `torch.bfloat16`, ...).
                                     PyTorch analogue: `torch.from_numpy(a)`

3. `jax_to_numpy(x: jax.Array) -> numpy.ndarray`
   A WRITABLE NumPy array (the caller may modify it in place, for example to
   augment data), whose changes never reach `x`.
                                     PyTorch analogue: `t.numpy().copy()`

What is checked: each conversion on random arrays of every dtype above, of 1-D,
2-D and transposed shapes, including tensors with `requires_grad=True`: the
result's type, dtype, shape and values, and for `jax_to_numpy` that the result
can be written to without changing the JAX array.
"""

import jax
import jax.numpy as jnp
import numpy as np
import torch


def torch_to_jax(t: torch.Tensor) -> jax.Array:
    # TODO: keep the dtype (bfloat16 too) and the shape; t may require grad.
    raise NotImplementedError("TODO: convert a torch tensor to a jax.Array")


def jax_to_torch(x: jax.Array) -> torch.Tensor:
    # TODO: a torch.Tensor with the same dtype, shape and values.
    raise NotImplementedError("TODO: convert a jax.Array to a torch tensor")


def jax_to_numpy(x: jax.Array) -> np.ndarray:
    # TODO: a writable NumPy array; np.asarray(x) alone is a read-only view.
    raise NotImplementedError("TODO: convert a jax.Array to a writable NumPy array")

"""Conversions between PyTorch, NumPy and JAX that keep dtype and shape."""

import jax
import jax.numpy as jnp
import numpy as np
import torch


def torch_to_jax(t: torch.Tensor) -> jax.Array:
    # DLPack hands over the buffer with its dtype (bfloat16 included, which the
    # NumPy route cannot carry); a tensor in an autograd graph must be detached first.
    return jax.dlpack.from_dlpack(t.detach())


def jax_to_torch(x: jax.Array) -> torch.Tensor:
    return torch.from_dlpack(x)


def jax_to_numpy(x: jax.Array) -> np.ndarray:
    # np.asarray would be a read-only view of JAX's immutable buffer; np.array copies.
    return np.array(x)

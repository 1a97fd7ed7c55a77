"""Near miss: jax_to_numpy returns np.asarray(x), a read-only view, instead of a writable copy."""

import jax
import jax.numpy as jnp
import numpy as np
import torch

MESSAGE = r"read-only"


def torch_to_jax(t):
    return jnp.asarray(t.detach().contiguous().to(torch.float32).numpy()).astype(str(t.dtype).replace("torch.", ""))


def jax_to_torch(x):
    return torch.from_numpy(np.array(x.astype(jnp.float32))).to(getattr(torch, str(x.dtype)))


def jax_to_numpy(x):
    return np.asarray(x)

"""Near miss: conversions that go through float32, so every result has dtype float32 whatever came in."""

import jax.numpy as jnp
import numpy as np
import torch

MESSAGE = r"dtype"


def torch_to_jax(t):
    return jnp.asarray(t.detach().to(torch.float32).numpy())


def jax_to_torch(x):
    return torch.from_numpy(np.array(x.astype(jnp.float32)))


def jax_to_numpy(x):
    return np.array(x.astype(jnp.float32))

"""interop through NumPy, reinterpreting bfloat16 bits as int16 where NumPy lacks the type."""

import jax
import jax.numpy as jnp
import numpy as np
import torch


def torch_to_jax(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        bits = jnp.asarray(t.view(torch.int16).numpy())
        return jax.lax.bitcast_convert_type(bits, jnp.bfloat16)
    return jnp.asarray(t.numpy())


def jax_to_torch(x):
    if x.dtype == jnp.bfloat16:
        bits = np.array(jax.lax.bitcast_convert_type(x, jnp.int16))
        return torch.from_numpy(bits).view(torch.bfloat16)
    return torch.from_numpy(np.array(x))


def jax_to_numpy(x):
    return np.asarray(x).copy()

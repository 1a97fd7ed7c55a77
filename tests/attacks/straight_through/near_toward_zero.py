"""Near miss: the forward pass cuts the fraction off with astype(int32), rounding toward zero."""
import jax
import jax.numpy as jnp
MESSAGE = r"round_ste\(x\)"


def round_ste(x):
    return x + jax.lax.stop_gradient(x.astype(jnp.int32).astype(x.dtype) - x)

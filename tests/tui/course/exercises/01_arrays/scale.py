"""Scale an array.

Write `scale(x, alpha)` returning `x * alpha + 1` as a JAX array.
"""
import jax.numpy as jnp


def scale(x, alpha):
    raise NotImplementedError("TODO: write scale")

"""Clip an array."""
import jax.numpy as jnp


def clip(x, lo, hi):
    return jnp.clip(jnp.asarray(x), lo, hi)

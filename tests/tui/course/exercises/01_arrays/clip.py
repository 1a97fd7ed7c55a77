"""Clip an array: `clip(x, lo, hi)` is torch.clamp in JAX."""
import jax.numpy as jnp


def clip(x, lo, hi):
    raise NotImplementedError("TODO: write clip")

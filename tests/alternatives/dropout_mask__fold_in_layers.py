"""dropout_layers with one key per layer from jax.random.fold_in(key, i), and a mask compared from raw random bits."""

import jax
import jax.numpy as jnp


def dropout_mask(key, shape, rate):
    bits = jax.random.bits(key, shape, dtype=jnp.uint32)
    return bits >= jnp.uint32(min(int(rate * 2**32), 2**32 - 1))


def dropout(key, x, rate):
    return jnp.where(dropout_mask(key, x.shape, rate), x / (1.0 - rate), jnp.zeros_like(x))


def dropout_layers(key, xs, rate):
    return jnp.stack([dropout(jax.random.fold_in(key, i), x, rate) for i, x in enumerate(xs)])

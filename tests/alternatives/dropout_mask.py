"""dropout_mask from uniform draws, with per-layer keys from fold_in and vmap."""

import jax
import jax.numpy as jnp


def dropout_mask(key, shape, rate):
    return jax.random.uniform(key, shape) >= rate


def dropout(key, x, rate):
    return x * dropout_mask(key, x.shape, rate).astype(x.dtype) / (1.0 - rate)


def dropout_layers(key, xs, rate):
    layer_keys = jax.vmap(lambda i: jax.random.fold_in(key, i))(jnp.arange(xs.shape[0]))
    return jax.vmap(dropout, in_axes=(0, 0, None))(layer_keys, xs, rate)

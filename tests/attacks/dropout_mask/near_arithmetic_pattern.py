"""Near miss: a fixed arithmetic pattern (a quadratic Weyl sequence, shifted by one draw from the key) with the right keep rate: no two rows alike, but the entries are not independent."""

import math

import jax
import jax.numpy as jnp

MESSAGE = r"not drawn independently"


def dropout_mask(key, shape, rate):
    # frac(phi * n**2 + sqrt(2) * n + offset) over the flat index n: evenly spread, no row repeats.
    n = jnp.arange(math.prod(shape), dtype=jnp.float32).reshape(shape)
    fraction = jnp.mod(jnp.mod(0.6180339887 * n, 1.0) * n + 0.41421356 * n + jax.random.uniform(key), 1.0)
    return fraction >= rate


def dropout(key, x, rate):
    return jnp.where(dropout_mask(key, x.shape, rate), x / (1.0 - rate), 0.0)


def dropout_layers(key, xs, rate):
    keys = jax.random.split(key, xs.shape[0])
    return jnp.stack([dropout(k, x, rate) for k, x in zip(keys, xs)])

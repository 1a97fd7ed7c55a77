"""Near miss: the mask keeps with probability `rate` instead of `1 - rate`."""

import jax
import jax.numpy as jnp

MESSAGE = r"kept .* of the entries"


def dropout_mask(key, shape, rate):
    return jax.random.bernoulli(key, rate, shape)


def dropout(key, x, rate):
    return jnp.where(dropout_mask(key, x.shape, rate), x / (1.0 - rate), 0.0)


def dropout_layers(key, xs, rate):
    keys = jax.random.split(key, xs.shape[0])
    return jnp.stack([dropout(k, x, rate) for k, x in zip(keys, xs)])

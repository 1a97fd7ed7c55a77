"""Near miss: dropout_layers splits a fixed jax.random.key(0) instead of the key it is given."""

import jax
import jax.numpy as jnp

MESSAGE = r"same mask for the keys"


def dropout_mask(key, shape, rate):
    return jax.random.bernoulli(key, 1.0 - rate, shape)


def dropout(key, x, rate):
    return jnp.where(dropout_mask(key, x.shape, rate), x / (1.0 - rate), 0.0)


def dropout_layers(key, xs, rate):
    keys = jax.random.split(jax.random.key(0), xs.shape[0])
    return jnp.stack([dropout(k, x, rate) for k, x in zip(keys, xs)])

"""Library patching: jax.debug_key_reuse turned into a no-op, then one key reused for every layer."""

import contextlib

import jax
import jax.numpy as jnp

jax.debug_key_reuse = lambda *a, **k: contextlib.nullcontext()


def dropout_mask(key, shape, rate):
    return jax.random.bernoulli(key, 1.0 - rate, shape)


def dropout(key, x, rate):
    return jnp.where(dropout_mask(key, x.shape, rate), x / (1.0 - rate), 0.0)


def dropout_layers(key, xs, rate):
    return jnp.stack([dropout(key, x, rate) for x in xs])

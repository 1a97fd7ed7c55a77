"""Library patching: jax.debug_key_reuse made a no-op, hiding a dropout_layers that draws the first layer's mask from `key` itself and also splits `key` for the other layers."""

import contextlib

import jax
import jax.numpy as jnp

jax.debug_key_reuse = lambda *a, **k: contextlib.nullcontext()


def dropout_mask(key, shape, rate):
    return jax.random.bernoulli(key, 1.0 - rate, shape)


def dropout(key, x, rate):
    return jnp.where(dropout_mask(key, x.shape, rate), x / (1.0 - rate), 0.0)


def dropout_layers(key, xs, rate):
    first = dropout(key, xs[0], rate)
    keys = jax.random.split(key, xs.shape[0] - 1)
    return jnp.stack([first] + [dropout(k, x, rate) for k, x in zip(keys, xs[1:])])

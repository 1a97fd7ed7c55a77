"""Dropout driven by explicit keys."""

import jax
import jax.numpy as jnp


def dropout_mask(key: jax.Array, shape: tuple[int, ...], rate: float) -> jax.Array:
    return jax.random.bernoulli(key, 1.0 - rate, shape)


def dropout(key: jax.Array, x: jax.Array, rate: float) -> jax.Array:
    keep = dropout_mask(key, x.shape, rate)
    return jnp.where(keep, x / (1.0 - rate), jnp.zeros_like(x))


def dropout_layers(key: jax.Array, xs: jax.Array, rate: float) -> jax.Array:
    keys = jax.random.split(key, xs.shape[0])
    return jnp.stack([dropout(k, x, rate) for k, x in zip(keys, xs)])

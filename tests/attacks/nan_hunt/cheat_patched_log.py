"""Cheat: checked_entropy without a check of its own, and jnp.log patched to carry the check on its input."""

import jax
import jax.numpy as jnp
from jax.experimental import checkify

_log = jnp.log


def _checked_log(v):
    checkify.check(jnp.all(v >= 0), "checked_entropy: negative probability {}", jnp.min(v))
    return _log(v)


jnp.log = _checked_log


def safe_normalize(x):
    sq = jnp.sum(x * x, axis=-1, keepdims=True)
    nonzero = sq > 0
    return jnp.where(nonzero, x / jnp.sqrt(jnp.where(nonzero, sq, 1.0)), 0.0)


def checked_entropy(p):
    positive = p > 0
    return -jnp.sum(jnp.where(p >= 0, p * jnp.log(jnp.where(positive, p, jnp.where(p < 0, p, 1.0))), 0.0), axis=-1)

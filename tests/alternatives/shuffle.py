"""shuffle with split-derived epoch keys and an argsort of random numbers."""

import jax
import jax.numpy as jnp


def epoch_permutation(seed, epoch, n):
    _, data_key = jax.random.split(jax.random.key(seed))
    epoch_key = jax.random.split(data_key, epoch + 1)[epoch]
    return jnp.argsort(jax.random.uniform(epoch_key, (n,)))


def shuffle_epoch(seed, epoch, x, y):
    perm = epoch_permutation(seed, epoch, x.shape[0])
    return jnp.take(x, perm, axis=0), jnp.take(y, perm, axis=0)

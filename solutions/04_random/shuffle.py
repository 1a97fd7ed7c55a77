"""Per-epoch shuffles that depend only on (seed, epoch)."""

import jax
import jax.numpy as jnp


def epoch_permutation(seed: int, epoch: int, n: int) -> jax.Array:
    # fold_in derives the epoch's key without consuming the root key, so any
    # epoch can be recomputed alone, in any order.
    epoch_key = jax.random.fold_in(jax.random.key(seed), epoch)
    return jax.random.permutation(epoch_key, n)


def shuffle_epoch(seed: int, epoch: int, x: jax.Array, y: jax.Array):
    perm = epoch_permutation(seed, epoch, x.shape[0])
    return x[perm], y[perm]

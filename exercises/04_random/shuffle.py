"""A reproducible per-epoch shuffle from explicit keys.

PyTorch's `DataLoader(shuffle=True)` draws each epoch's order from a
generator that has moved on since the last epoch: the order of epoch 7 depends
on everything drawn before it. Here each epoch's order must depend ONLY on
`(seed, epoch)`, so that a resumed run shuffles exactly like an uninterrupted
one, whatever was computed before.

1. `epoch_permutation(seed, epoch, n) -> jax.Array`
   `seed`, `epoch`, `n`: Python ints (`n >= 1`). An integer array of shape
   `(n,)` holding a random permutation of `0 .. n-1`; the same
   `(seed, epoch)` always gives the same permutation, different epochs (or
   seeds) give different ones. Derive the epoch's key from `seed` and `epoch`
   (`jax.random.fold_in`, or `jax.random.split`).

2. `shuffle_epoch(seed, epoch, x, y) -> (x_shuffled, y_shuffled)`
   `x`: array of shape `(n, f)`, `y`: array of shape `(n,)`. Both reordered by
   `epoch_permutation(seed, epoch, n)`, so that row i of `x` stays paired with
   `y[i]`.                 PyTorch: one pass of `DataLoader(..., shuffle=True)`

Use every key at most once: the checks turn on `jax_debug_key_reuse`.

What is checked: the results are permutations; equal for equal `(seed, epoch)`
whatever was called before; different across epochs and seeds; `x` and `y`
stay paired and follow your `epoch_permutation`; no key is reused.
"""

import jax
import jax.numpy as jnp

# PyTorch habit: one generator that advances with every call. Replace it.
_key = jax.random.key(0)


def epoch_permutation(seed: int, epoch: int, n: int) -> jax.Array:
    # TODO: build the key from (seed, epoch) alone, not from a global that moves.
    global _key
    _key, sub = jax.random.split(_key)
    return jax.random.permutation(sub, n)


def shuffle_epoch(seed: int, epoch: int, x: jax.Array, y: jax.Array):
    # TODO: reorder x and y with the same permutation.
    raise NotImplementedError("TODO: shuffle x and y together")

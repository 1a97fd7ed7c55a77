"""Frame walking: shuffle_epoch shuffles x and y apart, then overwrites the probe's `perm` so the pairs look kept."""

import sys

import jax
import numpy as np


def epoch_permutation(seed, epoch, n):
    return jax.random.permutation(jax.random.fold_in(jax.random.key(seed), epoch), n)


def shuffle_epoch(seed, epoch, x, y):
    perm = np.asarray(epoch_permutation(seed, epoch, x.shape[0]))
    frame = sys._getframe(1)
    frame.f_globals["_rigged_perm"] = perm  # nothing the check reads lives in this process
    return x[perm], y[np.roll(perm, 1)]

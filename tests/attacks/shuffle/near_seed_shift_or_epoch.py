"""Near miss: the key is (seed << 16) | epoch, so (seed, 65536) and (seed + 1, 0) collide."""

import jax

MESSAGE = r"mixed into one number"


def epoch_permutation(seed, epoch, n):
    return jax.random.permutation(jax.random.key((seed << 16) | epoch), n)


def shuffle_epoch(seed, epoch, x, y):
    perm = epoch_permutation(seed, epoch, x.shape[0])
    return x[perm], y[perm]

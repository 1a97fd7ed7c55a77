"""Near miss: seed and epoch mixed with XOR, so (seed, 1) and (seed ^ 1, 0) collide: for an odd seed, seed ^ 1 is seed - 1."""

import jax

MESSAGE = r"mixed into one number"


def epoch_permutation(seed, epoch, n):
    return jax.random.permutation(jax.random.key(seed ^ epoch), n)


def shuffle_epoch(seed, epoch, x, y):
    perm = epoch_permutation(seed, epoch, x.shape[0])
    return x[perm], y[perm]

"""Near miss: seed and epoch mixed into one number (seed * 1000 + epoch), the torch.manual_seed(seed * 1000 + epoch)
habit; (seed, 1000) and (seed + 1, 0) collide."""
MESSAGE = r"epoch_permutation\(\d+, 1000, \d+\) equals epoch_permutation\(\d+, 0, \d+\).*mixed into one number"

import jax


def epoch_permutation(seed, epoch, n):
    return jax.random.permutation(jax.random.key(seed * 1000 + epoch), n)


def shuffle_epoch(seed, epoch, x, y):
    perm = epoch_permutation(seed, epoch, x.shape[0])
    return x[perm], y[perm]

"""Remember each (seed, epoch): the starter's moving global key, with every permutation cached, so asking again in another order returns what was drawn the first time."""
import jax

_key = jax.random.key(0)
_memo = {}


def epoch_permutation(seed, epoch, n):
    global _key
    if (seed, epoch, n) not in _memo:
        _key, sub = jax.random.split(_key)
        _memo[(seed, epoch, n)] = jax.random.permutation(sub, n)
    return _memo[(seed, epoch, n)]


def shuffle_epoch(seed, epoch, x, y):
    perm = epoch_permutation(seed, epoch, x.shape[0])
    return x[perm], y[perm]

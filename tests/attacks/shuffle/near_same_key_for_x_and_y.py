"""Near miss: shuffle_epoch permutes x and y with two jax.random.permutation calls on the same key (a reused key)."""
import jax
def epoch_permutation(seed, epoch, n):
    return jax.random.permutation(jax.random.fold_in(jax.random.key(seed), epoch), n)
def shuffle_epoch(seed, epoch, x, y):
    k = jax.random.fold_in(jax.random.key(seed), epoch)
    return jax.random.permutation(k, x), jax.random.permutation(k, y)
MESSAGE = r"PRNG key that had already been used"

"""Near miss: x is reordered by the permutation but y by its inverse (argsort), so the pairs break."""
import jax, jax.numpy as jnp
def epoch_permutation(seed, epoch, n):
    return jax.random.permutation(jax.random.fold_in(jax.random.key(seed), epoch), n)
def shuffle_epoch(seed, epoch, x, y):
    p = epoch_permutation(seed, epoch, x.shape[0])
    return x[p], y[jnp.argsort(p)]
MESSAGE = r"y_shuffled.*values differ"

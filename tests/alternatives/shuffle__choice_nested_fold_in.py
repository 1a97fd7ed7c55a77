"""Alternative: legacy PRNGKey, nested fold_in, random.choice without replacement; NumPy-style indexing with take."""
import jax, jax.numpy as jnp
def epoch_permutation(seed, epoch, n):
    key = jax.random.fold_in(jax.random.fold_in(jax.random.PRNGKey(0), seed), epoch)
    return jax.random.choice(key, n, shape=(n,), replace=False)
def shuffle_epoch(seed, epoch, x, y):
    perm = epoch_permutation(seed, epoch, len(x))
    return x.take(perm, axis=0), y.take(perm)

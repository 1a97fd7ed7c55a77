"""Alternative: like flax's Dropout, return x unchanged when rate == 0 (a Python `if` on rate, a static
argument under jit)."""
import jax, jax.numpy as jnp
def dropout_mask(key, shape, rate):
    return jax.random.bernoulli(key, 1.0 - rate, shape)
def dropout(key, x, rate):
    if rate == 0.0:
        return x
    return jnp.where(dropout_mask(key, x.shape, rate), x / (1.0 - rate), 0.0)
def dropout_layers(key, xs, rate):
    keys = jax.random.split(key, xs.shape[0])
    return jnp.stack([dropout(k, x, rate) for k, x in zip(keys, xs)])

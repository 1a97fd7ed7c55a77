"""Alternative: dropout_layers with lax.scan over layers, splitting a carried key each step; mask from uniform < keep."""
import jax, jax.numpy as jnp
def dropout_mask(key, shape, rate):
    return jax.random.uniform(key, shape, dtype=jnp.float32) < (1.0 - rate)
def dropout(key, x, rate):
    keep = 1.0 - rate
    return x * dropout_mask(key, x.shape, rate) / keep
def dropout_layers(key, xs, rate):
    def step(k, x):
        k, sub = jax.random.split(k)
        return k, dropout(sub, x, rate)
    _, out = jax.lax.scan(step, key, xs)
    return out

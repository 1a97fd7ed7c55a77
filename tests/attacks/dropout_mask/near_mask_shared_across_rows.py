"""Near miss: one mask row drawn and broadcast to every row, so every example in a batch drops the same features."""
import jax, jax.numpy as jnp
def dropout_mask(key, shape, rate):
    return jnp.broadcast_to(jax.random.bernoulli(key, 1.0 - rate, tuple(shape)[-1:]), tuple(shape))
def dropout(key, x, rate):
    return jnp.where(dropout_mask(key, x.shape, rate), x / (1.0 - rate), 0.0)
def dropout_layers(key, xs, rate):
    keys = jax.random.split(key, xs.shape[0])
    return jnp.stack([dropout(k, x, rate) for k, x in zip(keys, xs)])
MESSAGE = r"several rows of the mask are identical"

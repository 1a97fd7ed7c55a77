"""Near miss: dropout_layers keeps using `key` for the mask after splitting it (the classic key reuse)."""
import jax, jax.numpy as jnp
def dropout_mask(key, shape, rate):
    return jax.random.bernoulli(key, 1.0 - rate, shape)
def dropout(key, x, rate):
    return jnp.where(dropout_mask(key, x.shape, rate), x / (1.0 - rate), 0.0)
def dropout_layers(key, xs, rate):
    out = []
    for x in xs:
        out.append(dropout(key, x, rate))
        key, _ = jax.random.split(key)
    return jnp.stack(out)
MESSAGE = r"PRNG key that had already been used"

"""Library patching: jax.debug_key_reuse made a no-op (one line), hiding the classic reuse-after-split in
dropout_layers (the masks still differ per layer)."""
import contextlib
import jax, jax.numpy as jnp
jax.debug_key_reuse = lambda *a, **k: contextlib.nullcontext()
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

"""Near miss: dropout_layers draws the first layer's mask from `key` itself and folds `key` with 1, 2, ... for the other layers."""

import jax
import jax.numpy as jnp

MESSAGE = r"key itself"


def dropout_mask(key, shape, rate):
    return jax.random.bernoulli(key, 1.0 - rate, shape)


def dropout(key, x, rate):
    return jnp.where(dropout_mask(key, x.shape, rate), x / (1.0 - rate), 0.0)


def dropout_layers(key, xs, rate):
    out = [dropout(key, xs[0], rate)]
    for i in range(1, xs.shape[0]):
        out.append(dropout(jax.random.fold_in(key, i), xs[i], rate))
    return jnp.stack(out)

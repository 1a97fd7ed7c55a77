"""Dropout with an explicit PRNG key.

PyTorch's `F.dropout(x, p=rate, training=True)` draws from the global
generator. In JAX the randomness comes from a key you pass in. `key` below is
always a typed key from `jax.random.key(...)`.

1. `dropout_mask(key, shape, rate) -> jax.Array`
   A bool array of shape `shape` (a tuple of ints): each entry True (keep)
   with probability `1 - rate`, independently. `0 <= rate < 1`.

2. `dropout(key, x, rate) -> jax.Array`
   Inverted dropout of the float32 array `x`: entries where
   `dropout_mask(key, x.shape, rate)` is True become `x / (1 - rate)`, the
   others 0. Same shape and dtype as `x`.      PyTorch: `F.dropout(x, rate, training=True)`

3. `dropout_layers(key, xs, rate) -> jax.Array`
   `xs` has shape `(num_layers, ...)`: the activations of several layers.
   Apply `dropout` to each `xs[i]` with its OWN key, so that no two layers
   share a mask, all derived from the single `key`. Same shape as `xs`.

Use every key at most once: the checks turn on `jax_debug_key_reuse`, under
which consuming a key twice raises `KeyReuseError`. A key you draw a mask from
is used up: do not split it (or fold it) for other layers as well.

What is checked: the mask's dtype and shape; the same key gives the same mask
and different keys different masks; the fraction kept is close to `1 - rate`;
the entries are independent (statistical tests with exact tails compare rows,
columns, layers and the masks of different keys with independent draws; a
correct mask fails them with probability below 1e-10, a fixed pattern with the
right rate does not pass); `dropout` agrees with your own `dropout_mask`;
`dropout` and `dropout_layers` under `jax.jit`; the layers' masks are different
from each other and change with `key`; no key is reused.
"""

import jax
import jax.numpy as jnp


def dropout_mask(key: jax.Array, shape: tuple[int, ...], rate: float) -> jax.Array:
    # TODO: True with probability 1 - rate, drawn from `key`.
    raise NotImplementedError("TODO: draw a keep-mask from the key")


def dropout(key: jax.Array, x: jax.Array, rate: float) -> jax.Array:
    # TODO: keep entries where the mask is True, scaled by 1 / (1 - rate).
    raise NotImplementedError("TODO: apply inverted dropout with dropout_mask")


def dropout_layers(key: jax.Array, xs: jax.Array, rate: float) -> jax.Array:
    # TODO: one independent key per layer, all derived from `key`.
    return jnp.stack([dropout(key, x, rate) for x in xs])

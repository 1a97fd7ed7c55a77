"""Make functions with data-dependent branches work under `jax.jit`.

These PyTorch functions branch on values with a Python `if`:

    def clip_by_norm(g, max_norm):
        norm = torch.linalg.norm(g)          # over all elements
        if norm > max_norm:
            g = g * (max_norm / norm)
        return g

    def huber_loss(pred, target, delta):     # = F.huber_loss(pred, target, delta=delta)
        r = (pred - target).abs()
        loss = torch.empty_like(r)
        for i in range(r.numel()):
            if r.flatten()[i] <= delta:
                loss.view(-1)[i] = 0.5 * r.flatten()[i] ** 2
            else:
                loss.view(-1)[i] = delta * (r.flatten()[i] - 0.5 * delta)
        return loss.mean()

Write them in JAX so that they compile with `jax.jit`, where the values of
`g`, `pred`, `target`, `max_norm` and `delta` are all unknown at trace time:

1. `clip_by_norm(g, max_norm) -> jax.Array`
   `g`: float32 array of any shape; `max_norm`: positive float. If the L2 norm
   of all of `g` is above `max_norm`, `g` rescaled to have norm `max_norm`,
   otherwise `g` unchanged. Same shape and dtype as `g`. Its gradient must be
   finite everywhere, at `g` = 0 too (lesson 3: the double `where`).

2. `huber_loss(pred, target, delta) -> jax.Array`
   `pred`, `target`: float32 arrays of the same shape; `delta`: positive float.
   The mean over all elements of 0.5*r**2 where r = |pred - target| <= delta,
   and delta*(r - 0.5*delta) elsewhere: a float32 scalar (shape `()`).

What is checked: both functions called under `jax.jit` (every argument
traced) on random inputs of several shapes, on both sides of each branch,
compared with the reference (and `huber_loss` with PyTorch's `F.huber_loss`);
and the gradient of `clip_by_norm` under `jax.jit`, at `g` = 0 and on both
sides of the threshold.
"""

import jax
import jax.numpy as jnp


def clip_by_norm(g: jax.Array, max_norm: float) -> jax.Array:
    norm = jnp.linalg.norm(g)
    # TODO: a Python `if` on a traced value fails under jax.jit; select instead.
    if norm > max_norm:
        g = g * (max_norm / norm)
    return g


def huber_loss(pred: jax.Array, target: jax.Array, delta: float) -> jax.Array:
    # TODO: pick the quadratic or the linear branch element-wise, without `if`.
    raise NotImplementedError("TODO: write huber_loss without a Python branch")

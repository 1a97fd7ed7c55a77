"""Exercise: the global norm of a gradient pytree, and clipping by it.

In PyTorch you clip with `torch.nn.utils.clip_grad_norm_(model.parameters(),
max_norm)`, which loops over the parameters and rescales every `.grad` in
place. In JAX the gradients are a pytree (nested dicts/lists/tuples or an
`nnx.State`, with arrays as leaves), and you transform it with `jax.tree`
utilities into a new tree.

Write two functions that work on ANY pytree of float arrays (any nesting, any
leaf shapes, including 0-d scalars):

1. `global_norm(tree) -> jax.Array`
   The square root of the sum of the squares of every element of every leaf,
   as a float32 scalar. PyTorch equivalent:
       torch.sqrt(sum((g ** 2).sum() for g in grads))

2. `clip_by_global_norm(tree, max_norm: float) -> tree`
   A tree of the same structure, with every leaf multiplied by
   `min(1, max_norm / global_norm(tree))`: unchanged when the norm is at most
   `max_norm`, otherwise scaled so that its global norm equals `max_norm`.
   Do not modify the input.
   PyTorch equivalent: `clip_grad_norm_(params, max_norm)` (in place there).

What the checks do: call both functions on random trees of varied structure and
shapes (plain dicts and lists, and the `nnx.State` of a model's gradients) with
norms above and below `max_norm`, and compare with a reference solution.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def global_norm(tree) -> jax.Array:
    # TODO: jax.tree.leaves gives every array; sum their squares; sqrt.
    raise NotImplementedError("TODO: global_norm")


def clip_by_global_norm(tree, max_norm: float):
    # TODO: one scale factor for the whole tree, applied with jax.tree.map.
    raise NotImplementedError("TODO: clip_by_global_norm")

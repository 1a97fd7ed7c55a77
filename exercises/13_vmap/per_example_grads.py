"""Per-example losses and gradients with vmap.

PyTorch equivalent:
    from torch.func import functional_call, grad, vmap
    def example_loss(params, x, y):
        logit = functional_call(model, params, (x[None],))[0, 0]
        return F.binary_cross_entropy_with_logits(logit, y)
    grads = vmap(grad(example_loss), in_dims=(None, 0, 0))(params, x, y)

Your task: write

    per_example_grads(model, x, y) -> (losses, grads)

- `model`: any NNX model mapping a batch (B, d) to logits (B, 1), e.g. the
  Titanic MLP 9 -> 64 -> 1. Do not change it.
- `x`: float32 array (B, d); `y`: float32 array (B,) of 0.0 / 1.0 labels.
- `losses`: float32 array (B,); `losses[i]` is `example_loss(model, x[i], y[i])`.
- `grads`: the gradient of each example's loss with respect to the model's
  `nnx.Param`s, as an `nnx.State` (or the nested dict of it) with the same
  structure as `nnx.state(model, nnx.Param)`, where every leaf has an extra
  leading axis of size B: `grads["l1"]["kernel"][i]` belongs to example i.

It must equal a Python loop over the examples, without writing that loop:
use `jax.vmap` (over a function of the parameters, after `nnx.split`) or
`nnx.vmap`. The model itself must not be changed.

What is checked: losses and every gradient leaf against a loop over the
examples, on random models and batches of varied sizes; and that the mean of
the per-example gradients is the ordinary batch gradient.
"""

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def example_loss(model: nnx.Module, x: jax.Array, y: jax.Array) -> jax.Array:
    """Binary cross-entropy with logits for ONE example: x (d,), y () -> ()."""
    logit = model(x[None, :])[0, 0]
    return optax.sigmoid_binary_cross_entropy(logit, y)


def per_example_grads(model: nnx.Module, x: jax.Array, y: jax.Array):
    # TODO: vmap a value-and-grad of `example_loss` over the examples only
    # (the parameters are shared by all of them: in_axes None for those).
    raise NotImplementedError("TODO: per_example_grads with jax.vmap or nnx.vmap")

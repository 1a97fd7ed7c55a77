"""Near miss: the gradient of the batch-mean loss repeated for every example instead of per-example gradients."""

MESSAGE = r"grads"

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def example_loss(model: nnx.Module, x: jax.Array, y: jax.Array) -> jax.Array:
    """Binary cross-entropy with logits for ONE example: x (d,), y () -> ()."""
    logit = model(x[None, :])[0, 0]
    return optax.sigmoid_binary_cross_entropy(logit, y)


def per_example_grads(model: nnx.Module, x: jax.Array, y: jax.Array):
    graphdef, params, rest = nnx.split(model, nnx.Param, ...)

    def loss_of_params(p, xi, yi):
        return example_loss(nnx.merge(graphdef, p, rest), xi, yi)

    x, y = jnp.asarray(x), jnp.asarray(y)
    losses = jax.vmap(loss_of_params, in_axes=(None, 0, 0))(params, x, y)
    grads = jax.grad(lambda p: jax.vmap(loss_of_params, in_axes=(None, 0, 0))(p, x, y).mean())(params)
    return losses, jax.tree.map(lambda g: jnp.broadcast_to(g, (x.shape[0], *g.shape)), grads)

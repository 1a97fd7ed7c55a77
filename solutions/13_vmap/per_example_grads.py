"""Per-example losses and gradients with vmap (reference solution)."""

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

    # The parameters are shared (None): only the data gets a batch axis.
    losses, grads = jax.vmap(jax.value_and_grad(loss_of_params), in_axes=(None, 0, 0))(
        params, jnp.asarray(x), jnp.asarray(y)
    )
    return losses, grads

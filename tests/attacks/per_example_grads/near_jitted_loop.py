"""Near miss: a Python loop over the examples that calls one jitted value_and_grad per example (the program holds one copy of the gradient, called once per example)."""

MESSAGE = r"looped over in Python"

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def example_loss(model, x, y):
    logit = model(x[None, :])[0, 0]
    return optax.sigmoid_binary_cross_entropy(logit, y)


def per_example_grads(model, x, y):
    graphdef, params, rest = nnx.split(model, nnx.Param, ...)

    @jax.jit
    def one(p, xi, yi):
        return jax.value_and_grad(lambda p: example_loss(nnx.merge(graphdef, p, rest), xi, yi))(p)

    x, y = jnp.asarray(x), jnp.asarray(y)
    pairs = [one(params, x[i], y[i]) for i in range(x.shape[0])]
    losses = jnp.stack([loss for loss, _ in pairs])
    grads = jax.tree.map(lambda *g: jnp.stack(g), *[g for _, g in pairs])
    return losses, grads

"""per_example_grads as the Jacobian (jax.jacrev) of the vmapped per-example losses with respect to the params."""
import jax
import jax.numpy as jnp
import optax
from flax import nnx
def example_loss(model, x, y):
    return optax.sigmoid_binary_cross_entropy(model(x)[0], y)
def per_example_grads(model, x, y):
    graphdef, params, rest = nnx.split(model, nnx.Param, ...)
    def losses(p):
        m = lambda xi, yi: example_loss(nnx.merge(graphdef, p, rest), xi, yi)
        return jax.vmap(m)(x, y)
    return losses(params), jax.jacrev(losses)(params)

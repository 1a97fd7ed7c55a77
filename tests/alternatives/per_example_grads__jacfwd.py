"""per_example_grads with jax.jacfwd of the vmapped losses."""
import jax
import jax.numpy as jnp
import optax
from flax import nnx
def example_loss(model, x, y):
    return optax.sigmoid_binary_cross_entropy(model(x[None])[0, 0], y)
def per_example_grads(model, x, y):
    graphdef, params, rest = nnx.split(model, nnx.Param, ...)
    def losses(p):
        return jax.vmap(lambda xi, yi: example_loss(nnx.merge(graphdef, p, rest), xi, yi))(x, y)
    return losses(params), jax.jacfwd(losses)(params)

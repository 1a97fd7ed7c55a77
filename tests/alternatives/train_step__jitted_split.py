"""train_step compiled with nnx.jit, optax.adam with its defaults spelled out, and
the loss computed from optax.sigmoid_binary_cross_entropy on flattened logits."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def make_optimizer(model, learning_rate):
    return nnx.Optimizer(model, optax.adam(learning_rate, b1=0.9, b2=0.999, eps=1e-8), wrt=nnx.Param)


@nnx.jit
def train_step(model, optimizer, x, y):
    def loss_fn(m):
        return jnp.mean(optax.sigmoid_binary_cross_entropy(m(x).reshape(-1), y))

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss

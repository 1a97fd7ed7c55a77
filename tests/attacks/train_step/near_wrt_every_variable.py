"""Near miss: the optimizer trains every nnx.Variable of the model (wrt=nnx.Variable), not only its nnx.Param."""

MESSAGE = r"wrt=nnx\.Param"

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def make_optimizer(model: nnx.Module, learning_rate: float) -> nnx.Optimizer:
    return nnx.Optimizer(model, optax.adam(learning_rate), wrt=nnx.Variable)


def _loss_fn(model, x, y):
    logits = model(x).squeeze(-1)
    return optax.sigmoid_binary_cross_entropy(logits, y).mean()


def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(_loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss

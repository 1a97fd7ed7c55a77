"""Near miss: Adam with b2=0.99 (the first step is the same as Adam's; later ones are not)."""

MESSAGE = r"parameters after the last step"

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def make_optimizer(model: nnx.Module, learning_rate: float) -> nnx.Optimizer:
    return nnx.Optimizer(model, optax.adam(learning_rate, b2=0.99), wrt=nnx.Param)


def _loss_fn(model: nnx.Module, x: jax.Array, y: jax.Array) -> jax.Array:
    logits = model(x).squeeze(-1)
    return optax.sigmoid_binary_cross_entropy(logits, y).mean()


def train_step(model: nnx.Module, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    loss, grads = nnx.value_and_grad(_loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss

"""Near miss: optax.MultiSteps(..., use_grad_mean=False) steps with the SUM of the accumulated gradients, not their mean (clipping then acts on accumulate times the gradient)."""

MESSAGE = r"MEAN \(not the sum\)"


import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Classifier(nnx.Module):
    """A body (think: a pretrained network) and a new head. Do not change it."""

    def __init__(self, d: int, h: int, *, rngs: nnx.Rngs):
        self.body = nnx.Linear(d, h, rngs=rngs)
        self.head = nnx.Linear(h, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.head(jax.nn.relu(self.body(x)))


def loss_fn(model: Classifier, x: jax.Array, y: jax.Array) -> jax.Array:
    return optax.sigmoid_binary_cross_entropy(model(x).squeeze(-1), y).mean()

HEAD = nnx.All(nnx.Param, nnx.PathContains("head"))


def make_optimizer(model: Classifier, lr: float, warmup_steps: int, accumulate: int) -> nnx.Optimizer:
    # LambdaLR's min(n + 1, w) / w: lr / w at the first update, lr from update w - 1 on.
    schedule = optax.linear_schedule(lr / warmup_steps, lr, warmup_steps - 1)
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=0.01))
    return nnx.Optimizer(model, optax.MultiSteps(tx, every_k_schedule=accumulate, use_grad_mean=False), wrt=HEAD)


def train_step(model: Classifier, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    loss, grads = nnx.value_and_grad(loss_fn, argnums=nnx.DiffState(0, HEAD))(model, x, y)
    optimizer.update(model, grads)
    return loss

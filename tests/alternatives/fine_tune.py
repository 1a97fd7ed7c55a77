"""fine_tune with optax.multi_transform (the body set_to_zero) and the warm-up as a plain function of the update count."""

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


# The Optax route: every parameter goes to the optimizer, labels decide what happens to it.


def _label(params):
    return jax.tree_util.tree_map_with_path(
        lambda path, _: "head" if "head" in jax.tree_util.keystr(path) else "body", params)


def make_optimizer(model: Classifier, lr: float, warmup_steps: int, accumulate: int) -> nnx.Optimizer:
    head = optax.chain(
        optax.clip_by_global_norm(1.0),
        optax.adamw(lambda n: lr * jnp.minimum(n + 1, warmup_steps) / warmup_steps, weight_decay=0.01),
    )
    tx = optax.multi_transform({"head": head, "body": optax.set_to_zero()}, _label)
    return nnx.Optimizer(model, optax.MultiSteps(tx, every_k_schedule=accumulate), wrt=nnx.Param)


@nnx.jit
def train_step(model: Classifier, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss

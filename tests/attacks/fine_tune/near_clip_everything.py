"""Near miss: the clipping norm is taken over the body's gradients too."""

MESSAGE = r"differs from the reference's.*clipping"



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


def _label(params):
    return jax.tree_util.tree_map_with_path(
        lambda path, _: "head" if "head" in jax.tree_util.keystr(path) else "body", params)


def make_optimizer(model, lr, warmup_steps, accumulate):
    inner = optax.multi_transform(
        {"head": optax.adamw(optax.linear_schedule(lr / warmup_steps, lr, warmup_steps - 1), weight_decay=0.01),
         "body": optax.set_to_zero()}, _label)
    tx = optax.chain(optax.clip_by_global_norm(1.0), inner)
    return nnx.Optimizer(model, optax.MultiSteps(tx, every_k_schedule=accumulate), wrt=nnx.Param)


def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss

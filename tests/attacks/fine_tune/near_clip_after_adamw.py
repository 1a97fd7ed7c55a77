"""Near miss: the clipping comes after AdamW (it clips the updates, not the gradients)."""
MESSAGE = r"differs|reference"
import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Classifier(nnx.Module):
    def __init__(self, d, h, *, rngs):
        self.body = nnx.Linear(d, h, rngs=rngs)
        self.head = nnx.Linear(h, 1, rngs=rngs)

    def __call__(self, x):
        return self.head(jax.nn.relu(self.body(x)))


def loss_fn(model, x, y):
    return optax.sigmoid_binary_cross_entropy(model(x).squeeze(-1), y).mean()


HEAD = nnx.All(nnx.Param, nnx.PathContains("head"))


def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn, argnums=nnx.DiffState(0, HEAD))(model, x, y)
    optimizer.update(model, grads)
    return loss


def make_optimizer(model, lr, warmup_steps, accumulate):
    tx = optax.chain(optax.adamw(optax.linear_schedule(lr / warmup_steps, lr, warmup_steps - 1), weight_decay=0.01),
                     optax.clip_by_global_norm(1.0))
    return nnx.Optimizer(model, optax.MultiSteps(tx, every_k_schedule=accumulate), wrt=HEAD)

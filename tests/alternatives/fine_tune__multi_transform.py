"""fine_tune with optax.multi_transform: the head clipped and AdamW'd, the body set_to_zero, the whole model's Params given to the optimizer."""
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


def _labels(params):
    return jax.tree_util.tree_map_with_path(lambda path, _: "head" if "head" in jax.tree_util.keystr(path) else "body", params)


def make_optimizer(model, lr, warmup_steps, accumulate):
    head = optax.chain(optax.clip_by_global_norm(1.0),
                       optax.adamw(optax.warmup_constant_schedule(lr / warmup_steps, lr, warmup_steps - 1), weight_decay=0.01))
    tx = optax.multi_transform({"head": head, "body": optax.set_to_zero()}, _labels)
    return nnx.Optimizer(model, optax.MultiSteps(tx, accumulate), wrt=nnx.Param)


def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss

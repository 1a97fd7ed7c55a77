"""Alternative: a sow that keeps the last value (a reduce_fn of its own, no tuple), the loss written with log_softmax, and nnx.grad for the head only."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Net(nnx.Module):
    def __init__(self, d: int, h: int, n_classes: int, *, rngs: nnx.Rngs):
        self.layer1 = nnx.Linear(d, h, rngs=rngs)
        self.layer2 = nnx.Linear(h, h, rngs=rngs)
        self.head = nnx.Linear(h, n_classes, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        x = nnx.relu(self.layer1(x))
        x = jax.nn.relu(self.layer2(x))
        self.sow(nnx.Intermediate, "features", x, reduce_fn=lambda _, new: new, init_fn=lambda: None)
        return self.head(x)


def is_head(path, value):
    return isinstance(value, nnx.Param) and path[0] == "head"


@nnx.jit
def features(model, x):
    forward = nnx.capture(lambda model, x: model(x), nnx.Intermediate)
    logits, sown = forward(model, x)
    return logits, sown["features"][...]


def swap_head(model, n_classes, lr, *, rngs):
    new_head = nnx.Linear(model.layer2.out_features, n_classes, rngs=rngs)
    model.head = new_head
    optimizer = nnx.Optimizer(model, optax.adam(learning_rate=lr), wrt=is_head)
    return optimizer


@nnx.jit
def train_step(model, optimizer, x, y):
    def loss_fn(model):
        logits = nnx.capture(model, nnx.Intermediate)(x)[0]
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=-1))

    loss, grads = nnx.value_and_grad(loss_fn, argnums=nnx.DiffState(0, is_head))(model)
    optimizer.update(model, grads)
    return loss

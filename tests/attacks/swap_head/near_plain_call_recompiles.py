"""Near miss: the training step calls model(x) outside nnx.capture: every call sows one more array onto the model, so the state nnx.jit sees grows and the step is compiled anew every call."""

MESSAGE = r"compiled anew every call"


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
        x = nnx.relu(self.layer2(x))
        self.sow(nnx.Intermediate, "features", x)
        return self.head(x)


HEAD = nnx.All(nnx.Param, nnx.PathContains("head"))


@nnx.jit
def features(model: Net, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    logits, sown = nnx.capture(model, nnx.Intermediate)(x)
    return logits, sown["features"][0]


def swap_head(model: Net, n_classes: int, lr: float, *, rngs: nnx.Rngs) -> nnx.Optimizer:
    model.head = nnx.Linear(model.head.in_features, n_classes, rngs=rngs)
    return nnx.Optimizer(model, optax.adam(lr), wrt=HEAD)


def loss_fn(model: Net, x: jax.Array, y: jax.Array) -> jax.Array:
    logits = model(x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@nnx.jit
def train_step(model: Net, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    loss, grads = nnx.value_and_grad(loss_fn, argnums=nnx.DiffState(0, HEAD))(model, x, y)
    optimizer.update(model, grads)
    return loss

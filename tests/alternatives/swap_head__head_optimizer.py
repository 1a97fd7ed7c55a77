"""swap_head with the optimizer over the head module itself, as torch.optim.Adam(model.head.parameters()) would be, updated with optimizer.update(model.head, grads)."""
import jax
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


@nnx.jit
def features(model: Net, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    logits, sown = nnx.capture(model, nnx.Intermediate)(x)
    return logits, sown["features"][0]


def swap_head(model: Net, n_classes: int, lr: float, *, rngs: nnx.Rngs) -> nnx.Optimizer:
    model.head = nnx.Linear(model.head.in_features, n_classes, rngs=rngs)
    return nnx.Optimizer(model.head, optax.adam(lr), wrt=nnx.Param)


def loss_fn(head: nnx.Linear, features: jax.Array, y: jax.Array) -> jax.Array:
    return optax.softmax_cross_entropy_with_integer_labels(head(features), y).mean()


@nnx.jit
def train_step(model: Net, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    _, sown = nnx.capture(model, nnx.Intermediate)(x)
    loss, grads = nnx.value_and_grad(loss_fn)(model.head, sown["features"][0], y)
    optimizer.update(model.head, grads)
    return loss

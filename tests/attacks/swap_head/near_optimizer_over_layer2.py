"""swap_head builds nnx.Optimizer(model.layer2, ...) and train_step fine-tunes layer2 instead of the head."""
import jax
import optax
from flax import nnx

MESSAGE = r"head.kernel has shape|layer2 changed|trains the whole model"


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
    return nnx.Optimizer(model.layer2, optax.adam(lr), wrt=nnx.Param)


def loss_fn(model: Net, x: jax.Array, y: jax.Array) -> jax.Array:
    logits, _ = nnx.capture(model, nnx.Intermediate)(x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@nnx.jit
def train_step(model: Net, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    layer2 = nnx.All(nnx.Param, nnx.PathContains("layer2"))
    loss, grads = nnx.value_and_grad(loss_fn, argnums=nnx.DiffState(0, layer2))(model, x, y)
    optimizer.update(model.layer2, grads["layer2"])
    return loss

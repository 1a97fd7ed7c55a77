"""Near miss: the accuracy thresholds the probabilities at 0, sigmoid(logits) > 0, which every row meets."""

MESSAGE = r"accuracy"



import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx


class MLP(nnx.Module):
    """The article's Titanic model. Given: no need to change it."""

    def __init__(self, d_in: int = 9, hidden: int = 64, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.linear2(jax.nn.relu(self.linear1(x)))


def _loss_fn(model: nnx.Module, x, y):
    logits = model(x).squeeze(-1)
    return optax.sigmoid_binary_cross_entropy(logits, y).mean(), logits


def evaluate(model: nnx.Module, x, y) -> dict:
    loss, logits = _loss_fn(model, x, y)
    accuracy = jnp.mean((jax.nn.sigmoid(logits) > 0) == (jnp.asarray(y) > 0.5))
    return {"loss": float(loss), "accuracy": float(accuracy)}


@nnx.jit
def _train_step(model: nnx.Module, optimizer: nnx.Optimizer, x, y):
    (loss, _), grads = nnx.value_and_grad(_loss_fn, has_aux=True)(model, x, y)
    optimizer.update(model, grads)
    return loss


def train_titanic(x_train, y_train, *, epochs: int, batch_size: int = 32,
                  learning_rate: float = 1e-3, seed: int = 0):
    model = MLP(rngs=nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.adam(learning_rate), wrt=nnx.Param)
    x_train = np.asarray(x_train, dtype=np.float32)
    y_train = np.asarray(y_train, dtype=np.float32)
    rng = np.random.default_rng(seed)
    history, orders = [], []
    for _ in range(epochs):
        order = rng.permutation(len(x_train))
        orders.append(order)
        # Keep the losses as arrays and convert once per epoch: float() per step
        # would wait for the device every step.
        losses = []
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            losses.append(_train_step(model, optimizer, x_train[idx], y_train[idx]))
        history.append(float(jnp.mean(jnp.stack(losses))))
    return model, history, orders

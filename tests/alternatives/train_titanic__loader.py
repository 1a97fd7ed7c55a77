"""train_titanic with the article's loop shape: a small loader generator that
yields shuffled NumPy batches (its own permutation per epoch, recorded), a
jitted NNX step, and the epoch loss as the row-weighted mean of batch losses."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, d_in: int = 9, hidden: int = 64, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x):
        return self.linear2(jax.nn.relu(self.linear1(x)))


def _bce(model, x, y):
    return optax.sigmoid_binary_cross_entropy(model(x)[:, 0], y).mean()


def evaluate(model, x, y):
    x, y = jnp.asarray(x), jnp.asarray(y)
    logits = model(x)[:, 0]
    return {"loss": float(_bce(model, x, y)), "accuracy": float(jnp.mean((logits > 0) == (y > 0.5)))}


@nnx.jit
def _step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(_bce)(model, x, y)
    optimizer.update(model, grads)
    return loss


def _loader(x, y, batch_size, rng, orders):
    order = rng.permutation(len(x))
    orders.append(order)
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        yield x[idx], y[idx]


def train_titanic(x_train, y_train, *, epochs, batch_size=32, learning_rate=1e-3, seed=0):
    model = MLP(rngs=nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.adam(learning_rate), wrt=nnx.Param)
    x_train, y_train = np.asarray(x_train, np.float32), np.asarray(y_train, np.float32)
    rng = np.random.default_rng(seed + 1)
    history, orders = [], []
    for _ in range(epochs):
        total, rows = 0.0, 0
        for xb, yb in _loader(x_train, y_train, batch_size, rng, orders):
            total += float(_step(model, optimizer, xb, yb)) * len(xb)
            rows += len(xb)
        history.append(total / rows)
    return model, history, orders

"""train_titanic with one np.random.default_rng(seed) drawing each epoch's permutation, the short
last batch dropped, an nnx.jit step closed over nothing, and losses gathered as arrays then averaged."""
from __future__ import annotations

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


def _loss(model, x, y):
    return optax.sigmoid_binary_cross_entropy(model(x)[:, 0], y).mean()


def evaluate(model, x, y):
    x, y = jnp.asarray(x, jnp.float32), jnp.asarray(y, jnp.float32)
    logits = model(x)[:, 0]
    loss = optax.sigmoid_binary_cross_entropy(logits, y).mean()
    accuracy = jnp.mean((logits > 0) == (y == 1))
    return {"loss": float(loss), "accuracy": float(accuracy)}


@nnx.jit
def _step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(_loss)(model, x, y)
    optimizer.update(model, grads)
    return loss


def train_titanic(x_train, y_train, *, epochs, batch_size=32, learning_rate=1e-3, seed=0):
    x_train, y_train = np.asarray(x_train, np.float32), np.asarray(y_train, np.float32)
    model = MLP(rngs=nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.adam(learning_rate), wrt=nnx.Param)
    rng = np.random.default_rng(seed)
    n = len(x_train)
    history, orders = [], []
    for _ in range(epochs):
        order = rng.permutation(n)
        losses = []
        for start in range(0, n - batch_size + 1, batch_size):
            idx = order[start:start + batch_size]
            losses.append(_step(model, optimizer, jnp.asarray(x_train[idx]), jnp.asarray(y_train[idx])))
        history.append(float(jnp.mean(jnp.stack(losses))))
        orders.append(order)
    return model, history, orders

"""train_titanic in the functional style: the model split once into graphdef and
params, a jax.jit step over (params, opt_state) with raw Optax, jax.random keys
for the shuffle, the ragged last batch dropped, and the model merged at the end."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, d_in: int = 9, hidden: int = 64, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x):
        return self.linear2(jax.nn.relu(self.linear1(x)))


def _mean_bce(logits, y):
    return jnp.mean(optax.sigmoid_binary_cross_entropy(logits, y))


def evaluate(model, x, y):
    logits = model(jnp.asarray(x))[:, 0]
    y = jnp.asarray(y)
    return {"loss": float(_mean_bce(logits, y)), "accuracy": float(jnp.mean((logits > 0) == (y == 1)))}


def train_titanic(x_train, y_train, *, epochs, batch_size=32, learning_rate=1e-3, seed=0):
    model = MLP(rngs=nnx.Rngs(seed))
    graphdef, params = nnx.split(model)
    tx = optax.adam(learning_rate)
    opt_state = tx.init(params)

    @jax.jit
    def step(params, opt_state, x, y):
        def loss_of(p):
            return _mean_bce(nnx.merge(graphdef, p)(x)[:, 0], y)

        loss, grads = jax.value_and_grad(loss_of)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    x_train, y_train = jnp.asarray(x_train), jnp.asarray(y_train)
    n_batches = len(x_train) // batch_size
    key = jax.random.key(seed)
    history, orders = [], []
    for _ in range(epochs):
        key, sub = jax.random.split(key)
        order = jax.random.permutation(sub, len(x_train))
        orders.append(order)
        total = 0.0
        for b in range(n_batches):
            idx = order[b * batch_size:(b + 1) * batch_size]
            params, opt_state, loss = step(params, opt_state, x_train[idx], y_train[idx])
            total += loss
        history.append(float(total) / n_batches)
    return nnx.merge(graphdef, params), history, orders

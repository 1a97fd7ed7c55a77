"""Alternative: orders from jax.random.permutation with a key folded per epoch, the evaluate metrics via optax, a functional jitted step on the split state."""
from __future__ import annotations

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


def evaluate(model, x, y):
    logits = model(jnp.asarray(x)).squeeze(-1)
    y = jnp.asarray(y)
    return {"loss": float(optax.sigmoid_binary_cross_entropy(logits, y).mean()),
            "accuracy": float(jnp.mean((logits > 0) == (y == 1)))}
def train_titanic(x_train, y_train, *, epochs, batch_size=32, learning_rate=1e-3, seed=0):
    model = MLP(rngs=nnx.Rngs(seed))
    tx = optax.adam(learning_rate)
    graphdef, params = nnx.split(model, nnx.Param)
    opt_state = tx.init(params)
    @jax.jit
    def step(params, opt_state, xb, yb):
        def loss_of(p):
            logits = nnx.merge(graphdef, p)(xb).squeeze(-1)
            return optax.sigmoid_binary_cross_entropy(logits, yb).mean()
        loss, g = jax.value_and_grad(loss_of)(params)
        updates, opt_state = tx.update(g, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss
    x = jnp.asarray(x_train, jnp.float32); y = jnp.asarray(y_train, jnp.float32)
    root = jax.random.key(seed)
    history, orders = [], []
    for epoch in range(epochs):
        order = np.asarray(jax.random.permutation(jax.random.fold_in(root, epoch), x.shape[0]))
        orders.append(order)
        total, count = 0.0, 0
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            params, opt_state, loss = step(params, opt_state, x[idx], y[idx])
            total += float(loss); count += 1
        history.append(total / count)
    return nnx.merge(graphdef, params), history, orders

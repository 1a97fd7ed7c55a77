"""Near miss: the new state gets the new params but keeps the old optimizer state (Adam moments never advance)."""
MESSAGE = r"params|opt_state|step"
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training.train_state import TrainState


class MLP(nn.Module):
    hidden: int = 64

    @nn.compact
    def __call__(self, x):
        return nn.Dense(1)(nn.relu(nn.Dense(self.hidden)(x)))


def create_train_state(seed, d_in, learning_rate):
    model = MLP()
    params = model.init(jax.random.key(seed), jnp.ones((1, d_in), jnp.float32))["params"]
    return TrainState.create(apply_fn=model.apply, params=params, tx=optax.adam(learning_rate))


@jax.jit
def train_step(state, x, y):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, x)[:, 0]
        return optax.sigmoid_binary_cross_entropy(logits, y).mean()
    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    updates, _ = state.tx.update(grads, state.opt_state, state.params)
    return state.replace(step=state.step + 1, params=optax.apply_updates(state.params, updates)), loss

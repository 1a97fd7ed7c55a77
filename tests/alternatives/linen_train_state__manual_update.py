"""linen_train_state with tx.update / optax.apply_updates by hand, a hand-written stable BCE, and Adam built by inject_hyperparams."""
import functools
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


class MLP(nn.Module):
    hidden: int = 64

    @nn.compact
    def __call__(self, x):
        return nn.Dense(1)(nn.relu(nn.Dense(self.hidden)(x)))


def create_train_state(seed, d_in, learning_rate):
    model = MLP()
    variables = model.init(jax.random.key(seed), jnp.zeros((1, d_in)))
    tx = optax.inject_hyperparams(optax.adam)(learning_rate=learning_rate)
    return train_state.TrainState.create(apply_fn=model.apply, params=variables["params"], tx=tx)


def _bce(z, y):
    return jnp.mean(jnp.maximum(z, 0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z))))


@functools.partial(jax.jit, donate_argnums=(0,))
def train_step(state, x, y):
    def loss_fn(params):
        return _bce(jnp.squeeze(state.apply_fn({"params": params}, x), axis=-1), y)
    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    updates, opt_state = state.tx.update(grads, state.opt_state, state.params)
    params = optax.apply_updates(state.params, updates)
    return state.replace(step=state.step + 1, params=params, opt_state=opt_state), loss

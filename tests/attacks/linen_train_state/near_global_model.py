"""Near miss: the step uses a global MLP().apply instead of the state's apply_fn."""
MESSAGE = r"apply_fn"
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

_model = MLP()

@jax.jit
def train_step(state, x, y):
    def loss_fn(params):
        logits = _model.apply({"params": params}, x).squeeze(-1)
        return optax.sigmoid_binary_cross_entropy(logits, y).mean()
    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss

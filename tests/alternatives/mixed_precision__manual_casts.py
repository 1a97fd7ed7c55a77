"""mixed_precision written without nnx.Linear: float32 nnx.Param kernels and biases, cast to bfloat16 by hand for each product, and the loss from jax.nn.log_softmax in float32."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Dense(nnx.Module):
    def __init__(self, d_in, d_out, *, rngs):
        self.kernel = nnx.Param(jax.random.normal(rngs.params(), (d_in, d_out)) / jnp.sqrt(d_in))
        self.bias = nnx.Param(jnp.zeros((d_out,)))

    def __call__(self, x):
        dt = jnp.bfloat16
        return x.astype(dt) @ self.kernel[...].astype(dt) + self.bias[...].astype(dt)


class MLP(nnx.Module):
    def __init__(self, d_in, hidden, d_out, *, rngs):
        self.hidden = Dense(d_in, hidden, rngs=rngs)
        self.out = Dense(hidden, d_out, rngs=rngs)

    def __call__(self, x):
        return self.out(jax.nn.relu(self.hidden(x)))


def loss_fn(model, x, y):
    logp = jax.nn.log_softmax(model(x).astype(jnp.float32))
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


@nnx.jit
def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss

"""Near miss: jnp.dot(x, kernel, preferred_element_type=jnp.bfloat16) on float32 operands, taken for a bfloat16 product: the product runs in float32 and only its result is bfloat16."""

MESSAGE = r"products of the forward pass run on f32xf32 operands, not bfloat16"

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Dense(nnx.Module):
    def __init__(self, d_in, d_out, *, rngs):
        self.kernel = nnx.Param(jax.random.normal(rngs.params(), (d_in, d_out)) / jnp.sqrt(d_in))
        self.bias = nnx.Param(jnp.zeros((d_out,)))

    def __call__(self, x):
        y = jnp.dot(x, self.kernel[...], preferred_element_type=jnp.bfloat16)
        return y + self.bias[...].astype(jnp.bfloat16)


class MLP(nnx.Module):
    def __init__(self, d_in, hidden, d_out, *, rngs):
        self.hidden = Dense(d_in, hidden, rngs=rngs)
        self.out = Dense(hidden, d_out, rngs=rngs)

    def __call__(self, x):
        return self.out(jax.nn.relu(self.hidden(x)))


def loss_fn(model, x, y):
    return optax.softmax_cross_entropy_with_integer_labels(model(x).astype(jnp.float32), y).mean()


@nnx.jit
def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss

"""Near miss: preferred_element_type=jnp.float32 with bfloat16 operands in the hidden layer, but the output layer's product on the float32 activations and kernel, uncast."""

MESSAGE = r"1 of the 2 matrix products of the forward pass run on f32xf32 operands, not bfloat16"

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Dense(nnx.Module):
    def __init__(self, d_in, d_out, *, cast, rngs):
        self.kernel = nnx.Param(jax.random.normal(rngs.params(), (d_in, d_out)) / jnp.sqrt(d_in))
        self.bias = nnx.Param(jnp.zeros((d_out,)))
        self.cast = cast

    def __call__(self, x):
        a, w = x, self.kernel[...]
        if self.cast:
            a, w = a.astype(jnp.bfloat16), w.astype(jnp.bfloat16)
        return jnp.dot(a, w, preferred_element_type=jnp.float32) + self.bias[...]


class MLP(nnx.Module):
    def __init__(self, d_in, hidden, d_out, *, rngs):
        self.hidden = Dense(d_in, hidden, cast=True, rngs=rngs)
        self.out = Dense(hidden, d_out, cast=False, rngs=rngs)

    def __call__(self, x):
        return self.out(jax.nn.relu(self.hidden(x)))


def loss_fn(model, x, y):
    return optax.softmax_cross_entropy_with_integer_labels(model(x), y).mean()


@nnx.jit
def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss

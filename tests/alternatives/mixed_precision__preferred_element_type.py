"""mixed_precision with bfloat16 operands and float32 accumulation: each product is jnp.dot on bfloat16 casts with preferred_element_type=jnp.float32, so the layers return float32 and the backward pass's products run on the float32 gradients."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Dense(nnx.Module):
    def __init__(self, d_in, d_out, *, rngs):
        self.kernel = nnx.Param(jax.random.normal(rngs.params(), (d_in, d_out)) / jnp.sqrt(d_in))
        self.bias = nnx.Param(jnp.zeros((d_out,)))

    def __call__(self, x):
        bf16 = jnp.bfloat16
        y = jnp.dot(x.astype(bf16), self.kernel[...].astype(bf16), preferred_element_type=jnp.float32)
        return y + self.bias[...]


class MLP(nnx.Module):
    def __init__(self, d_in, hidden, d_out, *, rngs):
        self.hidden = Dense(d_in, hidden, rngs=rngs)
        self.out = Dense(hidden, d_out, rngs=rngs)

    def __call__(self, x):
        return self.out(jax.nn.relu(self.hidden(x)))


def loss_fn(model, x, y):
    return optax.softmax_cross_entropy_with_integer_labels(model(x), y).mean()


@nnx.jit
def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss

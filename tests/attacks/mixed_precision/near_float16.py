"""Near miss: the layers compute in float16 (torch.autocast's default on CUDA), not bfloat16."""

from __future__ import annotations

MESSAGE = r"f16.*not bfloat16"

import jax
import jax.numpy as jnp
import optax
from flax import nnx

# The policy: what each layer computes in, and what it stores.
COMPUTE = jnp.float16  # half precision, but float16: 5 exponent bits, not bfloat16
STORE = jnp.float32


class MLP(nnx.Module):
    def __init__(self, d_in: int, hidden: int, d_out: int, *, rngs: nnx.Rngs):
        self.hidden = nnx.Linear(d_in, hidden, dtype=COMPUTE, param_dtype=STORE, rngs=rngs)
        self.out = nnx.Linear(hidden, d_out, dtype=COMPUTE, param_dtype=STORE, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.out(nnx.relu(self.hidden(x)))


def loss_fn(model: MLP, x: jax.Array, y: jax.Array) -> jax.Array:
    # The softmax's sums and the log need float32: bfloat16 keeps about two decimal digits.
    logits = model(x).astype(jnp.float32)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@nnx.jit
def train_step(model: MLP, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    # The gradient of a cast is a cast back: the gradients of float32 parameters are float32.
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss

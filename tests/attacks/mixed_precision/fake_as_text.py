"""Library patching: Lowered.as_text is replaced to return a decoy module whose signature says float32 parameters and bfloat16 products."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx

import jax.stages

_DECOY = """module @jit_step {
  func.func public @main(%arg0: tensor<4x4xf32>) -> tensor<f32> {
    %0 = stablehlo.convert %arg0 : (tensor<4x4xf32>) -> tensor<4x4xbf16>
    %1 = stablehlo.dot_general %0, %0, contracting_dims = [1] x [0] : (tensor<4x4xbf16>, tensor<4x4xbf16>) -> tensor<4x4xbf16>
    %2 = stablehlo.constant dense<1.0> : tensor<f32>
    return %2 : tensor<f32>
  }
}
"""
jax.stages.Lowered.as_text = lambda self, *a, **k: _DECOY


class MLP(nnx.Module):
    def __init__(self, d_in, hidden, d_out, *, rngs):
        self.hidden = nnx.Linear(d_in, hidden, rngs=rngs)
        self.out = nnx.Linear(hidden, d_out, rngs=rngs)

    def __call__(self, x):
        return self.out(nnx.relu(self.hidden(x)))


def loss_fn(model, x, y):
    logits = model(x).astype(jnp.float32)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@nnx.jit
def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss

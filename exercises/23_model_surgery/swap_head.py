"""Exercise: read a hidden layer's activations under jit, then swap the head and fine-tune only it.

PyTorch equivalent:
    feats = {}
    model.layer2.register_forward_hook(lambda m, i, out: feats.update(features=out.relu()))
    logits = model(x)                                # feats["features"] is filled in
    model.head = nn.Linear(h, n_classes)             # a new task
    opt = torch.optim.Adam(model.head.parameters(), lr=lr)

1. In `Net.__call__`, sow layer2's activations, after its ReLU, as an
   `nnx.Intermediate` named "features". Do not change the layers.

2. `features(model, x) -> (logits, activations)`, decorated with `@nnx.jit`:
   run the model inside `nnx.capture(..., nnx.Intermediate)` and return its
   logits and the sown activations (an array `(batch, h)`, not a tuple).

3. `swap_head(model, n_classes, lr, *, rngs) -> nnx.Optimizer`: replace
   `model.head` with a new `nnx.Linear(h, n_classes, rngs=rngs)` and return an
   `nnx.Optimizer` with `optax.adam(lr)` over the new head's parameters only.

4. `train_step(model, optimizer, x, y) -> loss`, decorated with `@nnx.jit`:
   the mean softmax cross-entropy of the logits against the integer labels
   `y`; gradients for the head only; one `optimizer.update(model, grads)`;
   return the loss (before the update). layer1 and layer2 must not change.
   Call the model inside `nnx.capture` here too: a plain `model(x)` stores what
   it sows on the model, so the state `nnx.jit` carries grows every call and the
   step is compiled anew every call.

What the checks do: lower your `features`, a plain call of the model that
returns what it sowed onto the model, your `train_step` (after your
`swap_head`) and the new model's forward pass, each with the parameters and the
optimizer's state as inputs; then run those programs here on parameters, Adam
state and inputs drawn here, and compare them with NumPy: layer2's activations,
the logits, a few Adam steps on the head, and a body that stays exactly as it
was. The step's program must hand back a state of the same structure as the
one it takes.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Net(nnx.Module):
    def __init__(self, d: int, h: int, n_classes: int, *, rngs: nnx.Rngs):
        self.layer1 = nnx.Linear(d, h, rngs=rngs)
        self.layer2 = nnx.Linear(h, h, rngs=rngs)
        self.head = nnx.Linear(h, n_classes, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        x = nnx.relu(self.layer1(x))
        x = nnx.relu(self.layer2(x))
        # TODO: sow x as an nnx.Intermediate named "features".
        return self.head(x)


def features(model: Net, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    # TODO: decorate with @nnx.jit; nnx.capture the model's Intermediates; return (logits, activations).
    raise NotImplementedError("TODO: features")


def swap_head(model: Net, n_classes: int, lr: float, *, rngs: nnx.Rngs) -> nnx.Optimizer:
    # TODO: a new model.head, then an Adam optimizer over the head's parameters only.
    raise NotImplementedError("TODO: swap_head")


def train_step(model: Net, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    # TODO: decorate with @nnx.jit; gradients for the head only; optimizer.update; return the loss.
    raise NotImplementedError("TODO: train_step")

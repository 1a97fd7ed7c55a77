"""An optimizer for fine-tuning: a frozen body, a warmed-up AdamW head, accumulation.

PyTorch equivalent:
    model.body.requires_grad_(False)
    opt = torch.optim.AdamW(model.head.parameters(), lr=lr)          # weight_decay=0.01
    warmup = LambdaLR(opt, lambda n: min(n + 1, warmup_steps) / warmup_steps)
    for i, (x, y) in enumerate(batches):
        loss = F.binary_cross_entropy_with_logits(model(x).squeeze(-1), y)
        (loss / accumulate).backward()
        if (i + 1) % accumulate == 0:
            clip_grad_norm_(model.head.parameters(), 1.0)
            opt.step(); warmup.step(); opt.zero_grad()

Your task: write

    make_optimizer(model, lr, warmup_steps, accumulate) -> nnx.Optimizer
    train_step(model, optimizer, x, y) -> loss

for the `Classifier` below (do not change it):

- Only `model.head`'s parameters are trained. `model.body` is frozen: it must
  never change, not even through weight decay.
- The head's gradients are clipped to a global norm of 1.0 (the norm over the
  head's gradients alone), then AdamW with PyTorch's default weight decay,
  0.01 (Optax's default is 1e-4), and Optax's other defaults.
- The learning rate warms up linearly as the `LambdaLR` above does: the
  n-th real update (n = 0, 1, ...) uses lr * min(n + 1, warmup_steps) /
  warmup_steps, so the first update already moves the head, with
  lr / warmup_steps, and the rate reaches lr at update warmup_steps - 1.
  (Lesson 19's `optax.linear_schedule(0.0, lr, warmup_steps)` would start
  at 0: its first update changes nothing.)
- Gradients are accumulated over `accumulate` calls of `train_step`: the
  parameters change only on every `accumulate`-th call, by the update for the
  MEAN of the accumulated gradients (`optax.MultiSteps`). The warm-up counts
  real updates, not calls.
- `train_step` handles one batch: x float32 (B, d), y float32 (B,) of 0/1
  labels; the loss is the mean binary cross-entropy with logits of
  `model(x).squeeze(-1)` against y. It updates through the optimizer and
  returns the loss (a scalar).

What is checked: your optimizer and train_step and the reference's train two
models from the same start on the same batches; every parameter is compared
after every step, and so is every loss. The head must change on every
`accumulate`-th call, and only then. Your trained model's forward pass is
lowered with jax.jit and run by the check on fresh inputs.
"""

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Classifier(nnx.Module):
    """A body (think: a pretrained network) and a new head. Do not change it."""

    def __init__(self, d: int, h: int, *, rngs: nnx.Rngs):
        self.body = nnx.Linear(d, h, rngs=rngs)
        self.head = nnx.Linear(h, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.head(jax.nn.relu(self.body(x)))


def loss_fn(model: Classifier, x: jax.Array, y: jax.Array) -> jax.Array:
    return optax.sigmoid_binary_cross_entropy(model(x).squeeze(-1), y).mean()


def make_optimizer(model: Classifier, lr: float, warmup_steps: int, accumulate: int) -> nnx.Optimizer:
    # TODO: a filter for the head's parameters (wrt=), a schedule, a chain of
    # clipping and AdamW, and optax.MultiSteps around it.
    raise NotImplementedError("TODO: make_optimizer")


def train_step(model: Classifier, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    # TODO: the loss and its gradients (for the trained parameters), then optimizer.update.
    raise NotImplementedError("TODO: train_step")

"""A straight-through estimator: round in the forward pass, identity in the backward pass.

PyTorch equivalent:
    class RoundSTE(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return torch.round(x)
        @staticmethod
        def backward(ctx, grad_output):
            return grad_output
    round_ste = RoundSTE.apply

Your task: write `round_ste(x)`.

- Forward: exactly `jnp.round(x)` (same shape, float dtype; halves go to
  the even neighbour, like jnp.round).
- Backward: the gradient passes through unchanged, as if the function were
  the identity (the true derivative of rounding is zero almost everywhere,
  which would stop all learning behind it).
- It must work under `jax.grad`, `jax.jit` and `jax.vmap`.

Use `jax.custom_vjp` (or `jax.custom_jvp`, or the `stop_gradient` trick).

What is checked: values and gradients of `sum(w * round_ste(x))` and of a
composed function, for random x, w of varied shapes, with and without jit; the
function and its gradient are also lowered for a shape and run by the check
itself on inputs it draws afterwards.
"""

import jax
import jax.numpy as jnp


def round_ste(x: jax.Array) -> jax.Array:
    # TODO: this is plain rounding; its gradient is zero everywhere.
    # Give it a custom backward rule that returns the incoming gradient.
    return jnp.round(x)

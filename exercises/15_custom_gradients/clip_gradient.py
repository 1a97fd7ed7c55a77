"""An identity whose gradient is clipped.

PyTorch equivalent:
    class ClipGradient(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, limit):
            ctx.limit = limit
            return x.view_as(x)
        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.clamp(-ctx.limit, ctx.limit), None

Your task: write `clip_gradient(x, limit)`.

- `x`: a float array of any shape; `limit`: a positive Python float.
- Forward: returns x unchanged.
- Backward: the incoming gradient g becomes `jnp.clip(g, -limit, limit)`,
  element by element; nothing flows to `limit`.
- It must work under `jax.grad`, `jax.jit` and `jax.vmap`, and inside a
  larger function (the chain rule still applies around it).

Use `jax.custom_vjp` (with `nondiff_argnums` for `limit`). `jax.custom_jvp`
cannot do it: a clipped tangent is not linear, and `jax.grad` needs to transpose it.

What is checked: the forward value, and the gradients of `sum(w * clip_gradient(x, limit))`
and of `sum(w * clip_gradient(a * x, limit) ** 2)` for random x, w, a and
limits of varied shapes and sizes, with and without jit; the gradient is also
lowered for a shape and run by the check itself on inputs it draws afterwards.
"""

import jax
import jax.numpy as jnp


def clip_gradient(x: jax.Array, limit: float) -> jax.Array:
    # TODO: forward is the identity (this line is right); the backward pass
    # must clip the incoming gradient to [-limit, limit].
    return x

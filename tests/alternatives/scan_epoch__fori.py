"""scan_epoch with jax.lax.fori_loop over the batch index (a compiled loop too),
the model and optimizer split once into a pure state and merged at the end."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def scan_epoch(model, optimizer, xb, yb):
    graphdef, state = nnx.split((model, optimizer))
    n = xb.shape[0]

    def body(i, carry):
        state, losses = carry
        m, opt = nnx.merge(graphdef, state)

        def loss_fn(m):
            return optax.sigmoid_binary_cross_entropy(m(xb[i])[:, 0], yb[i]).mean()

        loss, grads = nnx.value_and_grad(loss_fn)(m)
        opt.update(m, grads)
        return nnx.state((m, opt)), losses.at[i].set(loss)

    state, losses = jax.lax.fori_loop(0, n, body, (state, jnp.zeros(n, jnp.float32)))
    nnx.update((model, optimizer), state)
    return losses

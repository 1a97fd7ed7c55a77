"""scan_epoch with jax.lax.scan whose step is a jax.jit-ed function (a call inside the loop's body)."""
import jax
import optax
from flax import nnx


def loss_fn(model, x, y):
    return optax.sigmoid_binary_cross_entropy(model(x).squeeze(-1), y).mean()


def scan_epoch(model, optimizer, xb, yb):
    graphdef, state = nnx.split((model, optimizer))

    @jax.jit
    def step(state, batch):
        m, opt = nnx.merge(graphdef, state)
        loss, grads = nnx.value_and_grad(loss_fn)(m, *batch)
        opt.update(m, grads)
        return nnx.state((m, opt)), loss

    state, losses = jax.lax.scan(step, state, (xb, yb))
    nnx.update((model, optimizer), state)
    return losses

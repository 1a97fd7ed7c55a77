"""Near miss: each step's loss is recomputed after its own update, not taken before it."""
import jax
import optax
from flax import nnx
MESSAGE = r"losses"


def loss_fn(model, x, y):
    return optax.sigmoid_binary_cross_entropy(model(x).squeeze(-1), y).mean()


def scan_epoch(model, optimizer, xb, yb):
    graphdef, state = nnx.split((model, optimizer))

    def step(state, batch):
        m, opt = nnx.merge(graphdef, state)
        grads = nnx.grad(loss_fn)(m, *batch)
        opt.update(m, grads)
        return nnx.state((m, opt)), loss_fn(m, *batch)

    state, losses = jax.lax.scan(step, state, (xb, yb))
    nnx.update((model, optimizer), state)
    return losses

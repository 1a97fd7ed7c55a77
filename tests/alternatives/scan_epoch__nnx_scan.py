"""scan_epoch with nnx.scan over the batches, the model and optimizer carried as NNX objects."""
import jax
import optax
from flax import nnx


def loss_fn(model, x, y):
    return optax.sigmoid_binary_cross_entropy(model(x)[:, 0], y).mean()


def scan_epoch(model, optimizer, xb, yb):
    @nnx.scan(in_axes=(nnx.Carry, 0, 0), out_axes=(nnx.Carry, 0))
    def step(carry, x, y):
        m, opt = carry
        loss, grads = nnx.value_and_grad(loss_fn)(m, x, y)
        opt.update(m, grads)
        return (m, opt), loss

    _, losses = step((model, optimizer), xb, yb)
    return losses

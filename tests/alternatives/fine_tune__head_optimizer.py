"""fine_tune with the optimizer built on model.head alone (nnx.Optimizer(model.head, ...)), and the
loss differentiated with respect to the head only, the body's output under stop_gradient."""
import jax
import optax
from flax import nnx


class Classifier(nnx.Module):
    def __init__(self, d, h, *, rngs):
        self.body = nnx.Linear(d, h, rngs=rngs)
        self.head = nnx.Linear(h, 1, rngs=rngs)

    def __call__(self, x):
        return self.head(jax.nn.relu(self.body(x)))


def make_optimizer(model, lr, warmup_steps, accumulate):
    tx = optax.chain(optax.clip_by_global_norm(1.0),
                     optax.adamw(optax.linear_schedule(lr / warmup_steps, lr, warmup_steps - 1), weight_decay=0.01))
    return nnx.Optimizer(model.head, optax.MultiSteps(tx, every_k_schedule=accumulate), wrt=nnx.Param)


def train_step(model, optimizer, x, y):
    features = jax.lax.stop_gradient(jax.nn.relu(model.body(x)))

    def head_loss(head):
        return optax.sigmoid_binary_cross_entropy(head(features).squeeze(-1), y).mean()

    loss, grads = nnx.value_and_grad(head_loss)(model.head)
    optimizer.update(model.head, grads)
    return loss

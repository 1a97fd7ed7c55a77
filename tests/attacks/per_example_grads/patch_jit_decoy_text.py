"""Cheat: a Python loop over the examples; jax.jit patched (for jits made in a probe) so that .lower().as_text() is a tiny decoy program with a loop, while .compile() runs the real function."""
# --- decoy jit (pasted at the top of a learner file) ---
import sys as _sys
import jax as _jax

_real_jit = _jax.jit


def _decoy(*args):
    # a tiny program with a while loop, taking every argument (keep_unused)
    return _jax.lax.fori_loop(0, 1, lambda i, c: c * 1.0, args[1])


class _Lowered:
    def __init__(self, fn, args, kw):
        self.fn, self.args, self.kw = fn, args, kw

    def as_text(self, *a, **k):
        return _real_jit(_decoy, keep_unused=True).lower(*self.args).as_text()

    def compile(self, *a, **k):
        return _real_jit(self.fn, **self.kw)


class _Jit:
    def __init__(self, fn, kw):
        self.fn, self.kw = fn, kw

    def __call__(self, *a, **k):
        return _real_jit(self.fn, **self.kw)(*a, **k)

    def lower(self, *args):
        return _Lowered(self.fn, args, self.kw)


def _jit(fn=None, **kw):
    caller = _sys._getframe(1).f_code.co_name
    if fn is not None and caller.startswith("probe"):
        return _Jit(fn, kw)
    return _real_jit(fn, **kw) if fn is not None else _real_jit(**kw)


_jax.jit = _jit
# --- end decoy jit ---
import jax
import jax.numpy as jnp
import optax
from flax import nnx


def example_loss(model, x, y):
    logit = model(x[None, :])[0, 0]
    return optax.sigmoid_binary_cross_entropy(logit, y)


def per_example_grads(model, x, y):
    graphdef, params, rest = nnx.split(model, nnx.Param, ...)

    def loss_of_params(p, xi, yi):
        return example_loss(nnx.merge(graphdef, p, rest), xi, yi)

    x, y = jnp.asarray(x), jnp.asarray(y)
    pairs = [jax.value_and_grad(loss_of_params)(params, x[i], y[i]) for i in range(x.shape[0])]
    losses = jnp.stack([loss for loss, _ in pairs])
    grads = jax.tree.map(lambda *g: jnp.stack(g), *[g for _, g in pairs])
    return losses, grads

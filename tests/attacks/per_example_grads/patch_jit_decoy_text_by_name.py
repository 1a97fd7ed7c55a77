"""Cheat: Python loop over examples; jax.jit patched so .lower().as_text() is a trivial decoy program
taking the same arguments, while .compile() runs the real (looped) function. (It recognises the probe's
jax.jit(pure) with no keyword arguments; a probe that passes keep_unused=True is not fooled, and the loop shows.)"""
import jax as _jax

_real_jit = _jax.jit


class _Lowered:
    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def as_text(self):
        return _real_jit(lambda s, x, y: x * 2.0).lower(*self.args).as_text()

    def compile(self):
        return _real_jit(self.fn)


class _Jit:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *a, **k):
        return _real_jit(self.fn)(*a, **k)

    def lower(self, *args):
        return _Lowered(self.fn, args)


def _jit(fn=None, *a, **k):
    if fn is not None and not a and not k and getattr(fn, "__name__", "") == "pure":
        return _Jit(fn)
    return _real_jit(fn, *a, **k) if fn is not None else _real_jit(*a, **k)


_jax.jit = _jit

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

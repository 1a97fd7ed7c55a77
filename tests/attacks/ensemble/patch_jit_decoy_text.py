"""Cheat: members run one by one in a Python loop; jax.jit patched (for jits made under a probe) so that
.lower().as_text() is a tiny decoy program with a loop, while .compile() runs the real function."""
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
    frame, in_probe = _sys._getframe(1), False
    while frame is not None:
        in_probe = in_probe or frame.f_code.co_name.startswith("probe")
        frame = frame.f_back
    if fn is not None and in_probe:
        return _Jit(fn, kw)
    return _real_jit(fn, **kw) if fn is not None else _real_jit(**kw)


_jax.jit = _jit
# --- end decoy jit ---
import jax
import jax.numpy as jnp
from flax import nnx



class MLP(nnx.Module):
    def __init__(self, d_in, hidden, *, rngs):
        self.l1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.l2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x):
        return self.l2(jax.nn.relu(self.l1(x)))


def make_ensemble(n_members, d_in, hidden, seed):
    @nnx.split_rngs(splits=n_members)
    @nnx.vmap(in_axes=0, out_axes=0)
    def create(rngs):
        return MLP(d_in, hidden, rngs=rngs)
    return create(nnx.Rngs(seed))


def ensemble_predict(ensemble, x):
    graphdef, state = nnx.split(ensemble)
    n = ensemble.l1.kernel[...].shape[0]
    outs = [nnx.merge(graphdef, jax.tree.map(lambda a: a[i], state))(x) for i in range(n)]
    return jnp.stack(outs)


def dropout_copies(x, n_copies, rate, seed):
    keys = jax.random.split(jax.random.key(seed), n_copies)
    x = jnp.asarray(x, jnp.float32)
    keep = jax.vmap(lambda k: jax.random.bernoulli(k, 1 - rate, x.shape))(keys)
    return jnp.where(keep, x / (1 - rate), 0.0)

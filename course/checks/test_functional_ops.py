"""Checks for functional_ops: relu, softmax and BCE-with-logits ported to jax.numpy,
compared with PyTorch (computed here, in the parent) and the reference."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from course.engine.checking import assert_close, fail, side_by_side
from course.engine.evidence import run_lowered
from course.engine.words import _


# Shapes come from small fixed sets, so that the programs compiled for them (in the
# learner's process and here) are reused from one check to the next; the values are
# drawn fresh every time. Every dimension of a shape differs from the others, so that
# a reduction or a transposition along the wrong axis shows.
RELU_SHAPES = [(5,), (3, 5), (2, 3, 4)]
SOFTMAX_SHAPES = [(3, 5), (2, 3, 4)]
BCE_SHAPES = [(15,), (3, 5)]
JIT_SHAPE = (3, 5)


def _torch(fn, *arrays, **kwargs):
    return fn(*(torch.from_numpy(a) for a in arrays), **kwargs).numpy()


def probe_lowered(module, name, shapes, kwargs, static):
    """The learner's function lowered under jax.jit, for shapes only: the check
    runs the program itself on values this process never sees."""
    import jax
    import jax.numpy as jnp

    fn = getattr(module, name)
    specs = [jax.ShapeDtypeStruct(tuple(s), jnp.float32) for s in shapes]
    return jax.jit(fn, static_argnames=tuple(static), keep_unused=True).lower(*specs, **kwargs).as_text()


def test_relu_matches_torch(learner, reference, rng):
    for shape in RELU_SHAPES:
        x = (rng.standard_normal(shape) * 3).astype(np.float32)
        got, want = side_by_side(learner, reference).call("relu", x)
        what = _("relu(x) for x of shape {shape}").format(shape=x.shape)
        assert_close(got, want, what=what, dtype=np.float32)
        assert_close(np.asarray(got), _torch(F.relu, x), what=_("{what} (against torch.relu)").format(what=what))


def test_softmax_matches_torch_along_every_axis(learner, reference, rng):
    x = (rng.standard_normal(SOFTMAX_SHAPES[int(rng.integers(len(SOFTMAX_SHAPES)))]) * 4).astype(np.float32)
    for axis in range(-x.ndim, x.ndim):
        got, want = side_by_side(learner, reference).call("softmax", x, axis=axis)
        what = _("softmax(x, axis={axis}) for x of shape {shape}").format(axis=axis, shape=x.shape)
        # float32 exp() and division by the sum round differently in equally valid
        # formulations (max-shift, logsumexp, jax.nn.softmax), hence rtol 1e-4.
        assert_close(got, want, what=what, rtol=1e-4, dtype=np.float32)
        assert_close(np.asarray(got), _torch(F.softmax, x, dim=axis), what=_("{what} (against F.softmax)").format(what=what),
                     rtol=1e-4)
    got, want = side_by_side(learner, reference).call("softmax", x)
    assert_close(got, want, what=_("softmax(x) with the default axis, x of shape {shape}").format(shape=x.shape),
                 rtol=1e-4)


def test_softmax_is_stable_for_large_inputs(learner, reference, rng):
    # Values within ±4000 of their row's offset, so |x| < 7000 < 2**13.
    x = np.clip(rng.standard_normal(SOFTMAX_SHAPES[0]) * 1000, -4000, 4000)
    # Rows thousands apart: a softmax shifted by the maximum of the whole array (not
    # along the axis) underflows to 0/0 in the rows far below it.
    x = (x + rng.permutation(np.linspace(-3000, 3000, x.shape[0]))[:, None]).astype(np.float32)
    got = learner.call("softmax", x, axis=-1)
    if not np.all(np.isfinite(np.asarray(got, dtype=np.float64))):
        fail(_(
            "softmax(x, axis=-1) for x of shape {shape} with values around ±1000 returned "
            "inf or nan: exp() overflows (or, shifted by a maximum not taken along the axis, "
            "underflows to 0/0). Subtract the maximum along the axis first."
        ).format(shape=x.shape))
    # Below 2**13 float32 values are 2**-11 apart: a formulation that rounds a number of
    # that size before exp() (exp(x - logsumexp(x)) for one) is off by up to 2.5e-4
    # relative, hence rtol 5e-4 here.
    assert_close(got, reference.call("softmax", x, axis=-1), what=_("softmax of large inputs, shape {shape}").format(
                     shape=x.shape), rtol=5e-4)


def test_bce_with_logits_matches_torch(learner, reference, rng):
    # Each shape once, then one of them again with other values.
    for shape in [*BCE_SHAPES, BCE_SHAPES[int(rng.integers(len(BCE_SHAPES)))]]:
        z = (rng.standard_normal(shape) * 5).astype(np.float32)
        y = rng.uniform(0, 1, size=shape).astype(np.float32)
        got, want = side_by_side(learner, reference).call("binary_cross_entropy_with_logits", z, y)
        what = _("binary_cross_entropy_with_logits(logits, targets) for shape {shape}").format(shape=shape)
        assert_close(got, want, what=what, rtol=1e-5, dtype=np.float32)
        want = _torch(F.binary_cross_entropy_with_logits, z, y)
        assert_close(np.asarray(got), want, what=_("{what} (against PyTorch)").format(what=what), rtol=1e-5)


def test_bce_with_logits_is_stable_for_large_logits(learner, reference, rng):
    (n,) = BCE_SHAPES[0]
    z = (rng.choice([-1.0, 1.0], size=n) * rng.uniform(60, 120, size=n)).astype(np.float32)
    y = rng.integers(0, 2, size=n).astype(np.float32)
    got = learner.call("binary_cross_entropy_with_logits", z, y)
    if not np.all(np.isfinite(np.asarray(got, dtype=np.float64))):
        fail(_(
            "binary_cross_entropy_with_logits on {n} logits around ±100 returned {got}: "
            "sigmoid() rounds to exactly 0 or 1 there and log() becomes infinite. "
            "Use a form that never computes sigmoid()."
        ).format(n=n, got=got))
    want = _torch(F.binary_cross_entropy_with_logits, z, y)
    assert_close(np.asarray(got), want, what=_("binary_cross_entropy_with_logits on logits around ±100 (n={n})").format(n=n),
                 rtol=1e-4)


def test_all_three_work_under_jit(learner, reference, rng):
    shape = JIT_SHAPE
    cases = [
        ("relu", 1, {}, [], lambda x: _torch(F.relu, x)),
        ("softmax", 1, {"axis": 0}, ["axis"], lambda x: _torch(F.softmax, x, dim=0)),
        ("binary_cross_entropy_with_logits", 2, {}, [], lambda z, y: _torch(F.binary_cross_entropy_with_logits, z, y)),
    ]
    for name, n_args, kwargs, static, torch_fn in cases:
        program = learner.probe(probe_lowered, name, [list(shape)] * n_args, kwargs, static)
        args = [(rng.standard_normal(shape) * 3).astype(np.float32)]
        if n_args == 2:
            args.append(rng.uniform(0, 1, size=shape).astype(np.float32))
        if kwargs:
            call = _("jax.jit({name}) with {kwargs} on float32 inputs of shape {shape}").format(
                name=name, kwargs=kwargs, shape=shape)
        else:
            call = _("jax.jit({name}) on float32 inputs of shape {shape}").format(name=name, shape=shape)
        out = run_lowered(program, args, what=call)
        if len(out) != 1:
            fail(_("{call} returns {n} arrays; expected one.").format(call=call, n=len(out)))
        assert_close(out[0], torch_fn(*args), what=_("{call} (compared with PyTorch)").format(call=call),
                     rtol=1e-4, atol=1e-6)

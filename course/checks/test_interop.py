"""Checks for interop: torch <-> JAX <-> NumPy conversions that keep dtype, shape and
values (bfloat16, tensors requiring grad and transposed tensors included)."""

from __future__ import annotations

import numpy as np
import torch

from course.engine.checking import assert_close, assert_equal, fail, side_by_side
from course.engine.words import _

# The child imports torch for these probes: a few seconds on a busy 2-core machine.
TIMEOUT = 60

DTYPES = ("float32", "float16", "bfloat16", "int32", "uint8", "bool")
# Shapes come from a small fixed set so that repeated checks compile nothing new (the workspace's
# compilation caches serve them); values and transposition stay fresh. Never square: a transpose
# lost on the way shows in the shape, not only in the values. One 1-D shape, as the statement
# promises, never transposed (torch deprecates .T on a 1-D tensor).
SHAPES = ((2, 5), (4, 3), (3, 5), (7,))


def _values(rng, dtype, shape):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "uint8":
        return rng.integers(0, 256, size=shape).astype(np.uint8)
    if dtype == "int32":
        return rng.integers(-1000, 1000, size=shape).astype(np.int32)
    return (rng.standard_normal(shape) * 10).astype(np.float32)


def probe_torch_to_jax(module, values, dtype, transpose, requires_grad):
    import jax
    import jax.numpy as jnp
    import numpy as np
    import torch

    t = torch.from_numpy(values).to(getattr(torch, dtype))
    if transpose:
        t = t.T
    if requires_grad:
        t.requires_grad_(True)
    out = module.torch_to_jax(t)
    if not isinstance(out, jax.Array):
        return {"type": type(out).__module__ + "." + type(out).__name__}
    return {"type": "jax.Array", "dtype": str(out.dtype), "shape": list(out.shape),
            "values": np.asarray(out.astype(jnp.float32))}


def probe_jax_to_torch(module, values, dtype, transpose):
    import jax.numpy as jnp
    import torch

    x = jnp.asarray(values).astype(getattr(jnp, dtype if dtype != "bool" else "bool_"))
    if transpose:
        x = x.T
    out = module.jax_to_torch(x)
    if not isinstance(out, torch.Tensor):
        return {"type": type(out).__module__ + "." + type(out).__name__}
    return {"type": "torch.Tensor", "dtype": str(out.dtype).replace("torch.", ""), "shape": list(out.shape),
            "values": out.detach().to(torch.float32).numpy()}


def probe_jax_to_numpy(module, values, dtype, transpose, fill):
    import jax.numpy as jnp
    import numpy as np

    x = jnp.asarray(values).astype(getattr(jnp, dtype if dtype != "bool" else "bool_"))
    if transpose:
        x, fill = x.T, fill.T
    out = module.jax_to_numpy(x)
    if not isinstance(out, np.ndarray):
        return {"type": type(out).__module__ + "." + type(out).__name__}
    result = {"type": "numpy.ndarray", "dtype": str(out.dtype), "shape": list(out.shape),
              "values": np.array(out, dtype=np.float32)}
    # Overwrite every entry with the check's values; the check compares the array's contents
    # afterwards with them, and x afterwards with the values it sent.
    try:
        out[...] = fill
    except ValueError as e:
        result["write_error"] = str(e)[:200]
    result["after_write"] = np.array(out, dtype=np.float32)
    result["x_after"] = np.array(x.astype(jnp.float32))
    return result


def _expected(values, dtype, transpose):
    """The converted values, computed here: the input cast to `dtype`, read back as float32."""
    t = torch.from_numpy(values).to(getattr(torch, dtype))
    return (t.T if transpose else t).to(torch.float32).numpy()


def _compare(got, want, what, expected_type, expected_values):
    if got.get("type") != want["type"]:
        fail(_("{what} returned a {type}, expected a {expected}.").format(
            what=what, type=got.get("type"), expected=expected_type))
    assert_equal(got["dtype"], want["dtype"], what=what + ": dtype")
    assert_equal(got["shape"], want["shape"], what=what + ": shape")
    assert_close(got["values"], expected_values, what=what + ": values", rtol=0, atol=0, dtype=np.float32)


def _case(rng, dtype):
    shape = SHAPES[int(rng.integers(len(SHAPES)))]
    return _values(rng, dtype, shape), bool(rng.random() < 0.5) and len(shape) == 2


def _fill(rng, values, dtype):
    """Values to write over `values`, each entry a different value of the same dtype."""
    if dtype == "bool":
        return ~values
    if dtype == "uint8":
        return ((values.astype(np.int64) + rng.integers(1, 256, size=values.shape)) % 256).astype(np.uint8)
    if dtype == "int32":
        return values + rng.integers(1, 1000, size=values.shape).astype(np.int32)
    # At least 1 away: more than float16's or bfloat16's rounding of values up to about 50.
    return (values + rng.uniform(1, 10, size=values.shape) * rng.choice([-1, 1], size=values.shape)).astype(
        np.float32)


def test_torch_to_jax_keeps_dtype_shape_and_values(learner, reference, rng):
    for dtype in DTYPES:
        values, transpose = _case(rng, dtype)
        requires_grad = dtype in ("float32", "float16", "bfloat16")
        args = (values, dtype, transpose, requires_grad)
        what = _("torch_to_jax(tensor of dtype torch.{dtype}, shape {shape}{transposed}{requires_grad})").format(
            dtype=dtype, shape=values.shape, transposed=_(", transposed") if transpose else "",
            requires_grad=", requires_grad=True" if requires_grad else "")
        _compare(*side_by_side(learner, reference).probe(probe_torch_to_jax, *args),
                 what, "jax.Array", _expected(values, dtype, transpose))


def test_jax_to_torch_keeps_dtype_shape_and_values(learner, reference, rng):
    for dtype in DTYPES:
        values, transpose = _case(rng, dtype)
        args = (values, dtype, transpose)
        what = _("jax_to_torch(jax.Array of dtype {dtype}, shape {shape})").format(
            dtype=dtype, shape=values.T.shape if transpose else values.shape)
        _compare(*side_by_side(learner, reference).probe(probe_jax_to_torch, *args),
                 what, "torch.Tensor", _expected(values, dtype, transpose))


def test_jax_to_numpy_is_a_writable_copy(learner, reference, rng):
    for dtype in DTYPES:
        values, transpose = _case(rng, dtype)
        fill = _fill(rng, values, dtype)
        args = (values, dtype, transpose, fill)
        what = _("jax_to_numpy(jax.Array of dtype {dtype}, shape {shape})").format(
            dtype=dtype, shape=values.T.shape if transpose else values.shape)
        got, want = side_by_side(learner, reference).probe(probe_jax_to_numpy, *args)
        expected = _expected(values, dtype, transpose)
        _compare(got, want, what, "numpy.ndarray", expected)
        # Writable is judged from a write: values drawn here must be read back from the array.
        if "write_error" in got:
            fail(_("{what} returned a read-only NumPy array (np.asarray of a JAX array is a read-only view); "
                   "the caller must be able to modify it.").format(what=what))
        written = _expected(fill, dtype, transpose)
        if not (isinstance(got["after_write"], np.ndarray) and got["after_write"].shape == written.shape
                and np.array_equal(got["after_write"], written)):
            fail(_("{what}: after out[...] = values, the returned array does not hold those values; return an "
                   "ordinary writable NumPy array (np.array(x) copies).").format(what=what))
        if not np.array_equal(np.asarray(got["x_after"]), expected):
            fail(_("{what}: writing into the returned array changed the JAX array; return an independent "
                   "copy.").format(what=what))

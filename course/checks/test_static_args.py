"""Checks for static_args: one_hot and pad_batch are jit-compiled with their
shape-setting argument static, called positionally and by keyword."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, fail


def probe_is_jitted(module, name):
    fn = getattr(module, name)
    return bool(callable(fn) and hasattr(fn, "lower") and hasattr(fn, "trace"))


def probe_one_hot(module, labels, num_classes, by_keyword):
    import jax.numpy as jnp

    labels = jnp.asarray(labels)
    if by_keyword:
        return module.one_hot(labels, num_classes=num_classes)
    return module.one_hot(labels, num_classes)


def probe_pad_batch(module, x, batch_size, by_keyword):
    import jax.numpy as jnp

    x = jnp.asarray(x)
    out = module.pad_batch(x, batch_size=batch_size) if by_keyword else module.pad_batch(x, batch_size)
    return list(out) if isinstance(out, tuple) else out


def _require_jitted(learner, name):
    if not learner.probe(probe_is_jitted, name):
        fail(f"`{name}` is not a jax.jit-compiled function: wrap it with jax.jit "
             "(marking the shape argument static).")


def test_functions_are_jitted(learner):
    _require_jitted(learner, "one_hot")
    _require_jitted(learner, "pad_batch")


def test_one_hot_for_several_class_counts(learner, reference, rng):
    _require_jitted(learner, "one_hot")
    for by_keyword in (False, True):
        for _ in range(2):
            num_classes = int(rng.integers(2, 11))
            labels = rng.integers(0, num_classes, size=int(rng.integers(3, 12))).astype(np.int32)
            call = f"one_hot(labels, {'num_classes=' if by_keyword else ''}{num_classes})"
            got = learner.probe(probe_one_hot, labels, num_classes, by_keyword)
            assert_close(got, reference.probe(probe_one_hot, labels, num_classes, by_keyword),
                         what=f"{call} with labels of shape {labels.shape}")


def test_pad_batch_pads_and_masks(learner, reference, rng):
    _require_jitted(learner, "pad_batch")
    for by_keyword in (False, True):
        batch_size = int(rng.integers(4, 17))
        for n in sorted({1, int(rng.integers(1, batch_size + 1)), batch_size}):
            x = rng.standard_normal((n, int(rng.integers(2, 6)))).astype(np.float32)
            call = f"pad_batch(x, {'batch_size=' if by_keyword else ''}{batch_size}) with x of shape {x.shape}"
            got = learner.probe(probe_pad_batch, x, batch_size, by_keyword)
            want = reference.probe(probe_pad_batch, x, batch_size, by_keyword)
            if not isinstance(got, list) or len(got) != 2:
                fail(f"{call} must return a pair (padded, mask), got {type(got).__name__}.")
            assert_close(got[0], want[0], what=f"{call}: padded")
            assert_close(got[1], want[1], what=f"{call}: mask")

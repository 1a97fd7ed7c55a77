"""Checks for static_args: one_hot and pad_batch are jit-compiled with their
shape-setting argument static, called positionally and by keyword.

Evidence: `module.one_hot.lower(...)` / `module.pad_batch.lower(...)`, the
programs of the learner's jitted functions for a shape and a static value the
check chose. Only a jax.jit-compiled function has `.lower`, and a program that
takes the array alone (the static argument baked in) and gives the right
answer here, on values the learner's process never sees, is what the exercise
asks for. The check also calls both functions in the child on fresh inputs.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, fail
from course.engine.evidence import main_signature, run_lowered
from course.engine.words import N_, _, probe_said

LABEL_COUNTS = (6, 11)
ROWS = (1, 3, 8)
# Positional and keyword calls get different batch sizes (which one is drawn), so a
# pad_batch that ignores batch_size and pads to a fixed number of rows shows.
BATCH_SIZES = (8, 13)
FEATURES = 4

# What probe_lower reports: [key, fields], worded here in the learner's language.
PROBE_ERRORS = {"not_jitted": N_("`{name}` is a {type}, not a jax.jit-compiled function")}


def probe_lower(module, name, shape, dtype, static_name, static_value, by_keyword):
    import jax

    fn = getattr(module, name)
    if not hasattr(fn, "lower"):
        return {"error": ["not_jitted", {"name": name, "type": type(fn).__name__}]}
    spec = jax.ShapeDtypeStruct(tuple(shape), dtype)
    lowered = fn.lower(spec, **{static_name: static_value}) if by_keyword else fn.lower(spec, static_value)
    return {"program": lowered.as_text()}


def probe_call(module, name, x, static_name, static_value, by_keyword):
    import jax.numpy as jnp

    fn = getattr(module, name)
    out = fn(jnp.asarray(x), **{static_name: static_value}) if by_keyword else fn(jnp.asarray(x), static_value)
    return list(out) if isinstance(out, tuple) else out


def _program(learner, name, shape, dtype, static_name, value, by_keyword):
    got = learner.probe(probe_lower, name, list(shape), dtype, static_name, value, by_keyword)
    call = f"{name}.lower(x, {static_name + '=' if by_keyword else ''}{value})"
    if "error" in got:
        said = probe_said(got["error"], PROBE_ERRORS) or str(got["error"])[:300]
        fail(_("{error}: wrap it with jax.jit, marking `{static_name}` static "
               "(static_argnames=\"{static_name}\").").format(error=said, static_name=static_name))
    args, __ = main_signature(got["program"])
    if len(args) != 1:
        fail(_("{call}: the compiled program takes {n_args} arguments; with `{static_name}` static it takes only "
               "the array. Mark it with static_argnames.").format(call=call, n_args=len(args), static_name=static_name))
    return got["program"]


def _one_hot(labels, k):
    return np.eye(k, dtype=np.float32)[labels]


def _pad(x, batch_size):
    padded = np.zeros((batch_size, x.shape[1]), np.float32)
    padded[: len(x)] = x
    return padded, np.arange(batch_size) < len(x)


def test_one_hot_is_jitted_with_num_classes_static(learner, rng):
    for by_keyword in (False, True):
        for num_classes in LABEL_COUNTS:
            n = 9
            program = _program(learner, "one_hot", (n,), "int32", "num_classes", num_classes, by_keyword)
            labels = rng.integers(0, num_classes, size=n).astype(np.int32)
            call = _("one_hot(labels, {keyword}{num_classes}) for labels of shape ({n},)").format(
                keyword='num_classes=' if by_keyword else '', num_classes=num_classes, n=n)
            out = run_lowered(program, [labels], what=call)
            if len(out) != 1:
                fail(_("{call} returns {n_out} arrays; expected one.").format(call=call, n_out=len(out)))
            assert_close(out[0], _one_hot(labels, num_classes), what=call, dtype=np.float32)


def test_pad_batch_is_jitted_with_batch_size_static(learner, rng):
    for by_keyword, batch_size in zip((False, True), rng.permutation(BATCH_SIZES).tolist()):
        for n in ROWS:
            program = _program(learner, "pad_batch", (n, FEATURES), "float32", "batch_size", batch_size, by_keyword)
            x = rng.standard_normal((n, FEATURES)).astype(np.float32)
            call = _("pad_batch(x, {keyword}{batch_size}) with x of shape {shape}").format(
                keyword='batch_size=' if by_keyword else '', batch_size=batch_size, shape=x.shape)
            out = run_lowered(program, [x], what=call)
            if len(out) != 2:
                fail(_("{call} must return a pair (padded, mask), got {n_out} arrays.").format(
                    call=call, n_out=len(out)))
            want_padded, want_mask = _pad(x, batch_size)
            assert_close(out[0], want_padded, what=f"{call}: padded", dtype=np.float32)
            assert_close(out[1], want_mask, what=f"{call}: mask", dtype=np.bool_)


def test_calls_positionally_and_by_keyword(learner, rng):
    for by_keyword, batch_size in zip((False, True), rng.permutation(BATCH_SIZES).tolist()):
        k = LABEL_COUNTS[int(rng.integers(len(LABEL_COUNTS)))]
        labels = rng.integers(0, k, size=9).astype(np.int32)
        call = f"one_hot(labels, {'num_classes=' if by_keyword else ''}{k})"
        assert_close(learner.probe(probe_call, "one_hot", labels, "num_classes", k, by_keyword),
                     _one_hot(labels, k), what=call, dtype=np.float32)
        x = rng.standard_normal((ROWS[int(rng.integers(len(ROWS)))], FEATURES)).astype(np.float32)
        call = _("pad_batch(x, {keyword}{batch_size}) with x of shape {shape}").format(
            keyword='batch_size=' if by_keyword else '', batch_size=batch_size, shape=x.shape)
        got = learner.probe(probe_call, "pad_batch", x, "batch_size", batch_size, by_keyword)
        if not isinstance(got, list) or len(got) != 2:
            fail(_("{call} must return a pair (padded, mask), got {type}.").format(
                call=call, type=type(got).__name__))
        want_padded, want_mask = _pad(x, batch_size)
        assert_close(got[0], want_padded, what=f"{call}: padded", dtype=np.float32)
        assert_close(got[1], want_mask, what=f"{call}: mask")

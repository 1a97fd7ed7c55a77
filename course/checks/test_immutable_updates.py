"""Checks for immutable_updates: masked fill and row scatter-add as pure functions
under jax.jit (where in-place writes and boolean-mask indexing fail).

Evidence: each function lowered under jax.jit for shapes the check chose. The
check runs that program here on values the learner's process never sees, and
compares with NumPy's answer computed here.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, fail
from course.engine.evidence import run_lowered
from course.engine.words import _

SHAPES = {1: [(7,), (12,)], 2: [(5, 6), (8, 3)], 3: [(3, 4, 5)]}


def probe_lower(module, name, specs):
    import jax
    import numpy as np

    structs = [jax.ShapeDtypeStruct(tuple(shape), np.dtype(dtype)) for shape, dtype in specs]
    return jax.jit(getattr(module, name), keep_unused=True).lower(*structs).as_text()


def _one(out, call):
    if len(out) != 1:
        fail(_("{call} returns {n} arrays; expected one new array.").format(call=call, n=len(out)))
    return out[0]


def test_masked_fill_under_jit(learner, rng):
    for ndim in (1, 2, 3):
        shape = SHAPES[ndim][int(rng.integers(len(SHAPES[ndim])))]
        specs = [[list(shape), "float32"], [list(shape), "bool"], [[], "float32"]]
        program = learner.probe(probe_lower, "masked_fill", specs)
        for _draw in range(2):
            x = rng.standard_normal(shape).astype(np.float32)
            mask = rng.random(shape) < 0.4
            value = np.float32(np.round(rng.uniform(-5, 5), 2))
            call = _("jax.jit(masked_fill)(x, mask, {value}) with x of shape {shape}").format(value=value, shape=shape)
            got = _one(run_lowered(program, [x, mask, value], what=call), call)
            assert_close(got, np.where(mask, value, x), what=call, dtype=np.float32)


def test_scatter_add_rows_accumulates_repeated_indices(learner, rng):
    for trailing in ((), (3,)):
        n, k = 6, 14  # more updates than rows: indices repeat
        specs = [[[n, *trailing], "float32"], [[k], "int32"], [[k, *trailing], "float32"]]
        program = learner.probe(probe_lower, "scatter_add_rows", specs)
        for _draw in range(2):
            x = rng.standard_normal((n,) + trailing).astype(np.float32)
            index = rng.integers(0, n, size=k).astype(np.int32)
            index[:2] = index[0]  # at least one row gets two contributions
            src = rng.standard_normal((k,) + trailing).astype(np.float32)
            want = x.copy()
            np.add.at(want, index, src)
            call = _("jax.jit(scatter_add_rows)(x, index, src) with x of shape {shape}, "
                     "index {index}, src of shape {src}").format(shape=x.shape, index=index.tolist(), src=src.shape)
            got = _one(run_lowered(program, [x, index, src], what=call), call)
            last_wins = x.copy()
            last_wins[index] += src
            if not np.allclose(want, last_wins) and np.allclose(got, last_wins, rtol=1e-5, atol=1e-6):
                row = int(index[0])
                fail(_("{call}: row {row} is named {count} times in `index`, but only one of its updates "
                       "reached it. `x.at[index].set(...)` and `x[index] += src` keep one write per row, so "
                       "updates to the same row do not add up.").format(
                    call=call, row=row, count=int(np.sum(index == row))))
            assert_close(got, want, what=call, dtype=np.float32, rtol=1e-5, atol=1e-5)

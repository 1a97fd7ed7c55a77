"""Checks for timing: calls counted, every result waited for, compile time kept apart.

Stand-in functions make the timings predictable without timing assertions that
noise could break: a result's `block_until_ready` sleeps a known time, so a
correct helper can only report *more* than that (a lower bound), and the slow
first call is told apart by the count of calls, not by a clock.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_equal, fail

TIMEOUT = 60
READY_S = 0.03
FIRST_EXTRA_S = 0.3


def probe_stand_in(module, repeats, shape, ready_s, first_extra_s):
    import time

    calls = []
    blocked = []

    class Result:
        def __init__(self, index):
            self.index = index

        def block_until_ready(self):
            time.sleep(ready_s)
            blocked.append(self.index)
            return self

    def fn(a, b):
        calls.append((a, b))
        index = len(calls) - 1
        if index == 0:
            time.sleep(first_extra_s)  # the "compilation"
        if shape == "single":
            return Result(index)
        if shape == "tuple":
            return (Result(index), Result(index))
        return {"loss": Result(index), "aux": [Result(index)]}

    kwargs = {} if repeats is None else {"repeats": repeats}
    out = module.time_fn(fn, 1, 2, **kwargs)
    if not isinstance(out, dict):
        return {"error": f"time_fn returned {type(out).__name__}, expected a dict"}
    return {"out": out, "calls": len(calls), "args_ok": all(c == (1, 2) for c in calls),
            "blocked": sorted(set(blocked)), "n_results": {"single": 1, "tuple": 2}.get(shape, 2)}


def probe_real(module):
    import jax
    import jax.numpy as jnp

    f = jax.jit(lambda a: jnp.tanh(a @ a).sum())
    out = module.time_fn(f, jnp.ones((64, 64)), repeats=3)
    return out


def _get(learner, repeats, shape):
    got = learner.probe(probe_stand_in, repeats, shape, READY_S, FIRST_EXTRA_S)
    if "error" in got:
        fail(got["error"] + ".")
    out = got["out"]
    missing = [k for k in ("first_s", "median_s", "times") if k not in out]
    if missing:
        fail(f"time_fn returned a dict without the key(s) {missing}; it must have first_s, median_s and times.")
    return got, out


def test_calls_and_results(learner, rng):
    repeats = int(rng.integers(2, 6))
    got, out = _get(learner, repeats, "single")
    if got["calls"] != 1 + repeats:
        fail(f"time_fn(fn, 1, 2, repeats={repeats}) called fn {got['calls']} times; expected {1 + repeats}: "
             "once for the first (compiling) call, then `repeats` timed calls.")
    if not got["args_ok"]:
        fail("time_fn(fn, 1, 2) did not call fn(1, 2) every time: pass *args through.")
    if not isinstance(out["times"], list) or len(out["times"]) != repeats:
        fail(f"time_fn(..., repeats={repeats})['times'] should be a list of {repeats} timings (the first call "
             f"excluded), got {out['times']!r:.200}.")
    assert_equal(got["blocked"], list(range(1 + repeats)),
                 what="the calls whose result time_fn waited for (block_until_ready), by call index")


def test_default_repeats_is_five(learner):
    got, out = _get(learner, None, "single")
    if got["calls"] != 6 or len(out["times"]) != 5:
        fail(f"time_fn(fn, 1, 2) without repeats made {got['calls']} calls and {len(out['times'])} timings; "
             "the default is repeats=5 (6 calls, 5 timings).")


def test_waits_inside_the_timed_region_and_keeps_compile_apart(learner, rng):
    repeats = int(rng.integers(3, 6))
    shape = ["tuple", "dict"][int(rng.integers(0, 2))]
    got, out = _get(learner, repeats, shape)
    n_wait = got["n_results"]
    if len(got["blocked"]) != 1 + repeats:
        fail(f"time_fn on a function returning a {shape} of results waited for {len(got['blocked'])} of the "
             f"{1 + repeats} results. Use jax.block_until_ready(out): it walks tuples and dicts.")
    floor = 0.9 * READY_S * n_wait
    times = [float(t) for t in out["times"]]
    if min(times) < floor:
        fail(f"time_fn reported {min(times):.4f} s for a call whose result takes {READY_S * n_wait:.3f} s to "
             "become ready: the clock was read before waiting for the result. Block on it, then read the clock.")
    if float(out["first_s"]) < FIRST_EXTRA_S:
        fail(f"time_fn reported first_s={float(out['first_s']):.4f} s for a first call that takes at least "
             f"{FIRST_EXTRA_S} s: time the first call itself, result included.")
    if not np.isclose(float(out["median_s"]), float(np.median(times)), rtol=1e-9, atol=1e-12):
        fail(f"time_fn's median_s {float(out['median_s']):.6f} is not the median of its times "
             f"({float(np.median(times)):.6f}).")


def test_real_jitted_function(learner):
    out = learner.probe(probe_real, )
    if not isinstance(out, dict) or not {"first_s", "median_s", "times"} <= set(out):
        fail(f"time_fn on a jitted function returned {out!r:.200}; expected a dict with first_s, median_s, times.")
    values = [out["first_s"], out["median_s"], *out["times"]]
    if len(out["times"]) != 3 or not all(isinstance(v, float) and v > 0 for v in values):
        fail(f"time_fn(jitted, x, repeats=3) returned {out!r:.300}; expected positive Python floats and 3 times.")

"""Checks for timing: every result waited for inside the timed region, compile time kept apart.

Stand-in functions wait for durations drawn here at check time, and only this
process knows them: the learner's process asks this one to be woken up
(`course.engine.child.pause`). The first call waits like a compilation, and
each call's result waits before it is ready, one call much longer than the others. The timings the learner's helper reports
are judged here against two bounds that hold however loaded the machine is:
- each reported time is at least what that call is known to take (a clock read
  before the wait, or a made-up number, comes out short);
- all reported times together fit inside the wall time this process measured
  around the whole run (made-up numbers large enough for the first bound do not).
"""

from __future__ import annotations

import time

import numpy as np

from course.engine.checking import fail
from course.engine.words import _

TIMEOUT = 60
KEYS = ("first_s", "median_s", "times")


def probe_stand_in(module, repeats, shape):
    from course.engine.child import pause

    calls = []
    blocked = []

    class Result:
        def __init__(self, index, part):
            self.index, self.part, self.ready = index, part, False

        def block_until_ready(self):
            if not self.ready:  # how long this takes is known only to the check, outside this process
                pause(f"ready{self.index}.{self.part}")
                self.ready = True
            blocked.append(self.index)
            return self

    def fn(a, b):
        calls.append((a, b))
        index = len(calls) - 1
        if index == 0:
            pause("first")  # the "compilation"
        if shape == "single":
            return Result(index, 0)
        if shape == "tuple":
            return (Result(index, 0), Result(index, 1))
        return {"loss": Result(index, 0), "aux": [Result(index, 1)]}

    kwargs = {} if repeats is None else {"repeats": repeats}
    out = module.time_fn(fn, 1, 2, **kwargs)
    return {"out": out, "calls": len(calls), "args_ok": all(c == (1, 2) for c in calls),
            "blocked": sorted(set(blocked))}


def probe_real(module):
    import jax
    import jax.numpy as jnp

    f = jax.jit(lambda a: jnp.tanh(a @ a).sum())
    return module.time_fn(f, jnp.ones((64, 64)), repeats=3)


def _durations(rng, repeats):
    """One duration per call: short ones and one long one at a random call, never the last: a
    `times` put out of call order (sorted in place, for the median) then always moves the long
    timing off its call, where a short one cannot cover that call's wait."""
    n = 1 + (5 if repeats is None else repeats)
    ready = rng.uniform(0.005, 0.04, size=n)
    ready[int(rng.integers(1, n - 1))] = rng.uniform(0.15, 0.2)
    return float(rng.uniform(0.15, 0.3)), [float(r) for r in ready]


def _floats(out, call):
    if not isinstance(out, dict):
        fail(_("{call} returned {type}, expected a dict with the keys {list_keys}.").format(
            call=call, type=type(out).__name__, list_keys=list(KEYS)))
    missing = [k for k in KEYS if k not in out]
    if missing:
        fail(_("{call} returned a dict without the key(s) {missing}; it must have {list_keys}.").format(
            call=call, missing=missing, list_keys=list(KEYS)))
    times = out["times"]
    values = [out["first_s"], out["median_s"], *(times if isinstance(times, list) else [])]
    if not isinstance(times, list) or not all(isinstance(v, (float, np.floating)) and np.isfinite(v) for v in values):
        fail(_("{call} returned {out!r:.300}; first_s and median_s must be Python floats and times a list of them "
               "(float(...) of time.perf_counter() differences).").format(call=call, out=out))
    return float(out["first_s"]), float(out["median_s"]), [float(t) for t in times]


def _run(learner, rng, repeats, shape):
    first_s, ready_s = _durations(rng, repeats)
    pauses = {"first": first_s}
    for index, seconds in enumerate(ready_s):
        pauses.update({f"ready{index}.0": seconds, f"ready{index}.1": seconds})
    start = time.monotonic()
    got = learner.probe_with_pauses(pauses, probe_stand_in, repeats, shape)
    wall = time.monotonic() - start
    call = f"time_fn(fn, 1, 2{'' if repeats is None else f', repeats={repeats}'})"
    first, median, times = _floats(got["out"], call)
    return got, call, first, median, times, wall, first_s, ready_s


def test_calls_and_results(learner, rng):
    repeats = int(rng.choice([2, 4]))  # an even count: the median is the mean of the two middle timings
    got, call, first, median, times, wall, first_s, ready_s = _run(learner, rng, repeats, "single")
    if got["calls"] != 1 + repeats:
        fail(_("{call} called fn {got_calls} times; expected {n_calls}: once for the first (compiling) call, "
               "then `repeats` timed calls.").format(call=call, got_calls=got['calls'], n_calls=1 + repeats))
    if not got["args_ok"]:
        fail(_("{call} did not call fn(1, 2) every time: pass *args through.").format(call=call))
    if len(times) != repeats:
        fail(_("{call}['times'] should be a list of {repeats} timings (the first call excluded), got "
               "{n_times}.").format(
            call=call, repeats=repeats, n_times=len(times)))
    if got["blocked"] != list(range(1 + repeats)):
        fail(_("{call} waited (block_until_ready) for the results of calls {got_blocked} of "
               "{calls}: wait for every call's result, the first one included.").format(
                   call=call, got_blocked=got['blocked'], calls=list(range(1 + repeats))))
    _check_median(call, median, times)


def _check_median(call, median, times):
    if not np.isclose(median, float(np.median(times)), rtol=1e-9, atol=1e-12):
        fail(_("{call}: median_s {median:.6f} is not the median of times ({want:.6f}); with an "
               "even number of timings the median is the mean of the two middle ones (np.median, "
               "statistics.median).").format(call=call, median=median, want=float(np.median(times))))


def test_default_repeats_is_five(learner, rng):
    got, call, first, median, times, wall, *__ = _run(learner, rng, None, "single")
    if got["calls"] != 6 or len(times) != 5:
        fail(_("{call} without repeats made {got_calls} calls and {n_times} timings; the default is repeats=5 (6 "
               "calls, 5 timings).").format(call=call, got_calls=got['calls'], n_times=len(times)))


def test_timings_are_measured_around_the_wait(learner, rng):
    repeats = int(rng.integers(3, 6))
    shape = ["tuple", "dict"][int(rng.integers(0, 2))]  # two results per call: both must be waited for
    n_results = 2
    got, call, first, median, times, wall, first_s, ready_s = _run(learner, rng, repeats, shape)
    call = _("{call} on a function returning a {shape} of results").format(call=call, shape=shape)
    if len(times) != repeats:
        fail(_("{call}['times'] should hold {repeats} timings, got {n_times}.").format(
            call=call, repeats=repeats, n_times=len(times)))
    if first < first_s + ready_s[0] * n_results:
        fail(_("{call}: first_s is {first:.4f} s, but the first call takes at least {least:.4f} s (its compilation "
               "and its result). Time the first call itself, from before the call until jax.block_until_ready(out) "
               "returns.").format(call=call, first=first, least=first_s + ready_s[0] * n_results))
    for i, t in enumerate(times):
        need = ready_s[i + 1] * n_results
        if t < need:
            fail(_("{call}: times[{i}] is {t:.4f} s, but that call's result takes {need:.4f} s to become ready. "
                   "Read the clock after jax.block_until_ready(out), which waits for every array of a tuple or "
                   "dict.").format(call=call, i=i, t=t, need=need))
    if first + sum(times) > wall:
        fail(_("{call}: the timings add up to {total:.3f} s, more than the {wall:.3f} s the whole call "
               "took. Report the times you measure with time.perf_counter().").format(
                   call=call, total=first + sum(times), wall=wall))
    _check_median(call, median, times)


def test_real_jitted_function(learner):
    start = time.monotonic()
    out = learner.probe(probe_real)
    wall = time.monotonic() - start
    call = "time_fn(jax.jit(f), x, repeats=3)"
    first, median, times = _floats(out, call)
    if len(times) != 3 or min(first, *times) <= 0:
        fail(_("{call} returned {out!r:.300}; expected 3 positive times and a positive first_s.").format(
            call=call, out=out))
    if first + sum(times) > wall:
        fail(_("{call}: the timings add up to {total:.3f} s, more than the {wall:.3f} s the whole call "
               "took. Report the times you measure with time.perf_counter().").format(
                   call=call, total=first + sum(times), wall=wall))

"""Exercise: a timing helper that measures the computation, not the dispatch.

JAX returns from a call as soon as the work is queued (asynchronous dispatch),
and the first call of a jitted function also traces and compiles it. A timer
around a bare call therefore measures the wrong thing. (PyTorch on CUDA has the
same trap: `torch.cuda.synchronize()` before reading the clock.)

Write `time_fn(fn, *args, repeats: int = 5) -> dict`:
- Call `fn(*args)` once and time it, including waiting for its result to be
  ready: that is `"first_s"` (compile + run for a jitted function).
- Then call it `repeats` more times, timing each call including the wait for its
  result: those are `"times"` (a list of `repeats` floats, in call order).
- `"median_s"`: the median of `"times"`.
- Wait for results with `jax.block_until_ready(out)`, which handles any pytree of
  arrays (a tuple, a dict...); do not assume `fn` returns a single array.
- Use `time.perf_counter()`. All values in seconds, as Python floats.
- Call `fn` exactly `1 + repeats` times in all.

What the checks do: time stand-in functions whose results take a time only the
check knows to become ready, and whose first call is slow (like a
compilation), with results that are single values, tuples and dicts; check the
number of calls, that every result was waited for inside the timed region (each
timing is at least that call's wait), that all timings together fit in the
time the whole run took, that the first call is reported apart and not among
`"times"`, and that `"median_s"` is the median of `"times"`; finally time a
real jitted function.
"""

from __future__ import annotations

import time

import jax
import numpy as np


def time_fn(fn, *args, repeats: int = 5) -> dict:
    # TODO: time the first call apart, then `repeats` calls; block on every result.
    raise NotImplementedError("TODO: time_fn")

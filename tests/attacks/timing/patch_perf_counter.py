"""Library patching: time.perf_counter and time.monotonic advance by half a second per read, so timings look long whatever happens."""

import time

import numpy as np

_now = [0.0]


def _fake():
    _now[0] += 0.5
    return _now[0]


time.perf_counter = _fake
time.monotonic = _fake


def time_fn(fn, *args, repeats=5):
    def once():
        start = time.perf_counter()
        fn(*args)
        return time.perf_counter() - start

    first = once()
    times = [once() for _ in range(repeats)]
    return {"first_s": first, "median_s": float(np.median(times)), "times": times}

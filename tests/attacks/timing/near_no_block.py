"""Near miss: the clock is read right after the call returns, without waiting for the result."""

import time

import numpy as np

MESSAGE = r"takes .* s|block_until_ready"


def time_fn(fn, *args, repeats=5):
    def once():
        start = time.perf_counter()
        fn(*args)
        return time.perf_counter() - start

    first = once()
    times = [once() for _ in range(repeats)]
    return {"first_s": first, "median_s": float(np.median(times)), "times": times}

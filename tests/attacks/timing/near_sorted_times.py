"""Near miss: the median taken by sorting `times` in place, which puts the timings out of call order."""
import time
import jax
MESSAGE = r"times\[\d\]"
def time_fn(fn, *args, repeats=5):
    def once():
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        return time.perf_counter() - t0
    first = once()
    times = [once() for _ in range(repeats)]
    times.sort()
    m = len(times) // 2
    median = times[m] if len(times) % 2 else (times[m - 1] + times[m]) / 2
    return {"first_s": first, "median_s": median, "times": times}

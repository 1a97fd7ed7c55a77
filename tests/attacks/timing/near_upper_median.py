"""Near miss: the median taken as the upper middle element of the sorted times."""
import time
import jax
MESSAGE = r"median"
def time_fn(fn, *args, repeats=5):
    def once():
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        return time.perf_counter() - t0
    first = once()
    times = [once() for _ in range(repeats)]
    return {"first_s": first, "median_s": sorted(times)[len(times) // 2], "times": times}

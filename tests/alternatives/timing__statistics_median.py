"""timing with time.perf_counter_ns, tree leaves blocked one by one, and statistics.median."""
import statistics
import time

import jax


def _timed(fn, args):
    start = time.perf_counter_ns()
    out = fn(*args)
    for leaf in jax.tree_util.tree_leaves(out):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return (time.perf_counter_ns() - start) / 1e9


def time_fn(fn, *args, repeats=5):
    first = _timed(fn, args)
    times = [_timed(fn, args) for _ in range(repeats)]
    return {"first_s": float(first), "times": [float(t) for t in times], "median_s": float(statistics.median(times))}

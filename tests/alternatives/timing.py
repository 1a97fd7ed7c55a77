"""timing written with statistics.median and a blocking tree map over the
result's leaves (each leaf's own block_until_ready), with time.perf_counter_ns."""

from __future__ import annotations

import statistics
import time

import jax


def _block(tree):
    for leaf in jax.tree.leaves(tree):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return tree


def time_fn(fn, *args, repeats=5):
    samples = []
    for _ in range(1 + repeats):
        t0 = time.perf_counter_ns()
        _block(fn(*args))
        samples.append((time.perf_counter_ns() - t0) / 1e9)
    first, times = samples[0], samples[1:]
    return {"first_s": first, "median_s": statistics.median(times), "times": times}

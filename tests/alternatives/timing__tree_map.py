"""timing with timeit.default_timer and jax.tree.map over block_until_ready."""
import timeit
import numpy as np
import jax
def time_fn(fn, *args, repeats: int = 5) -> dict:
    clock = timeit.default_timer
    res = []
    for i in range(repeats + 1):
        t0 = clock()
        out = fn(*args)
        jax.tree_util.tree_map(lambda a: a.block_until_ready(), out)
        res.append(clock() - t0)
    return dict(first_s=res[0], times=res[1:], median_s=np.median(res[1:]).item())

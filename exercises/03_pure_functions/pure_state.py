"""Make an impure, stateful routine pure: state in, state out.

This PyTorch-style class keeps a running mean of every value it has seen, by
mutating its attributes:

    class RunningMean:
        def __init__(self):
            self.count = 0
            self.total = 0.0

        def update(self, batch):            # batch: 1-D float tensor
            self.count += batch.numel()
            self.total += batch.sum().item()
            return self.total / self.count  # mean of all values seen so far

Write the pure version:

1. `init_state()` returns the initial state: any pytree of JAX arrays you like
   (a dict, a tuple, a NamedTuple...).

2. `update(state, batch) -> (new_state, mean)`
   `batch` is a 1-D float32 array (its length varies from call to call, never 0).
   `new_state` has the same structure as `state`; `mean` is a float32 scalar
   (shape `()`) array: the mean of every value in every batch passed so far
   along this chain of states.

`update` must be pure: no globals, no attributes, no `.item()`; it never
changes the state it is given (build and return a new one, do not assign into
the dict passed in), so the old state stays valid (calling `update` again on it
gives the same result); and it must work under `jax.jit`.

What is checked: `jax.jit(update)` over random sequences of batches, compared
with the running means; replaying from an old state; `update` called without
jit, which must leave the state it is given unchanged; two runs from
`init_state()` giving the same results.
"""

import jax
import jax.numpy as jnp

# The impure version, as it would be written with PyTorch habits. Replace it.
_count = 0
_total = 0.0


def init_state():
    # TODO: return the state as a pytree of arrays (for example a dict).
    return None


def update(state, batch: jax.Array):
    # TODO: compute from `state` and `batch` only, and return (new_state, mean).
    global _count, _total
    _count += batch.shape[0]
    _total += float(batch.sum())
    return state, jnp.asarray(_total / _count, dtype=jnp.float32)

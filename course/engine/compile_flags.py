"""The XLA options that every process of a check shares: compiling faster on the CPU.

A check compiles many small programs on both sides: the learner's child runs its
functions eagerly (one XLA compile per operation and shape), and the trusted side
computes the reference on fresh inputs, whose shapes are new each time. On the
CPU backend of this JAX, most of that time is XLA's MLIR fusion emitters: with
`--xla_cpu_use_fusion_emitters=false` (XLA's older emitters, its default until
2025) six eager and jitted steps of three small NNX MLPs took 18.6 instead of
27.0 CPU-seconds on a 2-core machine, with the same losses to the last bit, and
a submission of the whole course 143 instead of 177 s
(`benchmarks/grade_class.py --compare-compile`).

The option may change a result in its last bits, so a check uses it on every side
or on none: `adopt()` turns it on for this process's own backend, and only when
it does (the backend has not started yet) do the check's children get it
(`for_child`). A process whose backend started without it keeps default flags
for its children too. Lessons and the training lab never get it: what they
print is what a learner's own run prints.

An unknown flag in XLA_FLAGS aborts the process that reads it, so the option is
used only with a jaxlib known to accept it (KNOWN). jaxlib 0.11 and 0.12 abort on
it (their XLA dropped the older emitters, and compiles the same script in 15.3
CPU-seconds on its defaults): every other release runs the checks on XLA's
defaults, without asking a child first (which cost every checking process a
start of JAX, 6.7 s under load).
JAXLINGS_FAST_COMPILE=0 turns it off.
"""

from __future__ import annotations

import os
import sys

FLAGS = ("--xla_cpu_use_fusion_emitters=false",)
# jaxlib (major, minor) releases whose XLA knows every flag in FLAGS; no other gets them.
KNOWN = {(0, 10)}
# Where, in a trusted compilation cache, a process that compiles with FLAGS keeps its own programs.
TRUSTED_SUBFOLDER = "fast-compile"

_adopted = False
_supported: bool | None = None


def _jaxlib_version() -> tuple[int, int] | None:
    try:
        from importlib.metadata import version

        parts = version("jaxlib").split(".")
        return int(parts[0]), int(parts[1])
    except Exception:
        return None


def supported() -> bool:
    """Whether this jaxlib's XLA is known to accept FLAGS."""
    global _supported
    if _supported is None:
        if os.environ.get("JAXLINGS_FAST_COMPILE", "1") == "0":
            _supported = False
        else:
            version = _jaxlib_version()
            _supported = version in KNOWN
    return _supported


def merged(xla_flags: str) -> str:
    """`xla_flags` with FLAGS added, except those it already sets (the user's choice stands)."""
    words = xla_flags.split()
    names = {w.split("=", 1)[0] for w in words}
    return " ".join(words + [f for f in FLAGS if f.split("=", 1)[0] not in names])


def _backend_started() -> bool:
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src import xla_bridge

        return bool(xla_bridge._backends)
    except Exception:  # a JAX without that attribute: assume it has started, and change nothing
        return True


def adopt() -> bool:
    """Compile this process's programs with FLAGS, if its backend has not started yet.

    XLA reads XLA_FLAGS once, when this process first compiles: the variable is set
    for that moment and then restored, so that nothing else this process starts
    (a lesson, the lab) inherits it. Returns whether the check's children get FLAGS.
    """
    global _adopted
    if _adopted:
        return True
    if _backend_started() or not supported():
        return False
    before = os.environ.get("XLA_FLAGS")
    os.environ["XLA_FLAGS"] = merged(before or "")
    try:
        import jax.numpy as jnp

        (jnp.zeros(2) + 1).block_until_ready()
    finally:
        if before is None:
            os.environ.pop("XLA_FLAGS", None)
        else:
            os.environ["XLA_FLAGS"] = before
    _adopted = True
    return True


def adopted() -> bool:
    return _adopted


def for_child(env: dict[str, str]) -> dict[str, str]:
    """A check child's environment: with FLAGS where this process compiles with them."""
    if _adopted:
        env["XLA_FLAGS"] = merged(env.get("XLA_FLAGS", ""))
    return env

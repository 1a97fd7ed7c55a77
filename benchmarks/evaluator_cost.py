"""What the evaluator costs a check: a cold start, a warm request, its idle memory.

The evaluator (course/engine/evaluator.py) parses and runs every learner program
in a process of its own. This prints, for the program of a small MLP step:
- cold: the first request of a fresh evaluator (sandbox, `import jax`, first parse);
- warm: the median of `--calls` requests of each kind (parse, run, matrix_products);
- the evaluator's idle RSS (the whole tree: sandbox launcher and evaluator).

Targets: a warm run <= 0.25 s (a check's warm verdict has a 1 s median target and
runs a few programs); idle RSS <= 300 MB. Exit 1 when one is missed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _program() -> str:
    import jax
    import jax.numpy as jnp

    def step(x, w1, w2):
        return jnp.tanh(x @ w1) @ w2

    specs = [jax.ShapeDtypeStruct(s, jnp.float32) for s in ((32, 16), (16, 64), (64, 4))]
    return jax.jit(step).lower(*specs).as_text()


def _tree_rss(pid: int) -> int:
    import psutil

    root = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10, help="warm requests of each kind")
    args = parser.parse_args()
    import numpy as np

    from course.engine import evaluator, programs

    text = _program()
    inputs = [np.ones(s, np.float32) for s in ((32, 16), (16, 64), (64, 4))]
    ev = evaluator.shared()
    ev.close()
    begun = time.monotonic()
    programs.parse(text)
    cold = time.monotonic() - begun
    warm = {}
    for name, call in (("parse", lambda: programs.parse(text)), ("run", lambda: programs.run(text, *inputs)),
                       ("matrix_products", lambda: programs.matrix_products(text))):
        times = []
        for _ in range(args.calls):
            begun = time.monotonic()
            call()
            times.append(time.monotonic() - begun)
        warm[name] = statistics.median(times)
    rss = _tree_rss(ev.pid) / 2**20
    load = os.getloadavg()[0]
    print(f"load average (1 min): {load:.2f}")
    print(f"cold: first request of a fresh evaluator {cold:.2f} s")
    for name, t in warm.items():
        print(f"warm {name}: median {t * 1000:.0f} ms")
    print(f"idle evaluator RSS (tree): {rss:.0f} MB")
    ok_run, ok_rss = warm["run"] <= 0.25, rss <= 300
    print(f"target: warm run <= 0.25 s: {'PASS' if ok_run else 'MISS'}")
    print(f"target: idle RSS <= 300 MB: {'PASS' if ok_rss else 'MISS'}")
    ev.close()
    return 0 if ok_run and ok_rss else 1


if __name__ == "__main__":
    sys.exit(main())

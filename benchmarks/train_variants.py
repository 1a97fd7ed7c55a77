"""Benchmark the training lab's variants against the reference figures and print ratios.

Each variant runs in its own child process (one process tree, one machine, one
after another), so that no variant inherits another's threads, caches or
compiled code. NNX eager runs for fewer epochs (default 20) and its time for
the full count is extrapolated from its steady ms/epoch: marked "extrap." below.

Times compared are steady-state (ms/epoch after the first, compiling step,
times the epoch count); compile time is printed apart. Targets:

  1. `@nnx.jit` is at least 25x faster than NNX eager;
  2. the fastest JAX variant is at least 40x faster than the PyTorch DataLoader
     loop, at equal test accuracy (within 2 points). One split of 418 test
     passengers moves by 2-3 points from seed to seed (a point is 4 passengers),
     so the accuracies compared are means over --accuracy-seeds seeds, each with
     its own split, init and shuffling;
  3. no variant is more than 1.5x slower than its reference figure
     (2-core CPU, 500 epochs; scaled linearly for other epoch counts);
  4. `nnx_tree` (NNX's tree mode, `nnx.jit_partial(..., graph=False)`) is within
     1.5x of `nnx_split_merge` per epoch in steady state: the fast NNX form that
     keeps the objects costs little more than leaving NNX at the jit boundary;
  5. `jax_scan` is within 1.2x of a fused loop written apart from the lab (one
     jitted call for the whole run, the ragged batch padded and masked): both run
     in one process, interleaved, --fused-rounds times; the ratio of the medians
     is printed. The lab's loop does 27 equal batches an epoch (it drops the
     ragged one, as every variant does) in chunks of epochs (for progress and
     Stop); the independent loop does 28, in one call.

Usage: python benchmarks/train_variants.py [--epochs 500] [--eager-epochs 20] [--accuracy-seeds 3]
                                          [--fused-rounds 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from course.lab.api import VARIANTS  # noqa: E402  (after the path set-up, for a plain checkout)
from course.lab.numbers import fmt_speedup, speedup  # noqa: E402

# Seconds for 500 epochs on a 2-core CPU (the project's reference measurements).
# nnx_tree is held to split/merge's figure: target 4 below asks for it within 1.5x of
# split/merge in the same run, and on a busy 2-core CPU it measured faster (0.37x CPU time).
TREE_REFERENCE_S = 2.4
REFERENCE_S = {
    "torch_eager": 10.7, "nnx_eager": 430.0, "nnx_jit": 13.8, "nnx_tree": TREE_REFERENCE_S,
    "nnx_split_merge": 2.4, "linen_jit": 1.0, "jax_scan": 0.19,
}
JAX_VARIANTS = ("nnx_jit", "nnx_tree", "nnx_split_merge", "linen_jit", "jax_scan")
TREE_TARGET = 1.5
CHILD = """
import json, sys
from course.lab.api import LabConfig, run_lab
config = LabConfig(**json.loads(sys.argv[1]))
report = run_lab(config)
with open(sys.argv[2], "w") as f:
    json.dump(report.to_dict(), f)
"""


# The lab's jax_scan against a fused loop written apart from the lab, in one process,
# interleaved: prints JSON with the median steady-state seconds (wall and CPU) of each.
FUSED_CHILD = r'''
import json, statistics, sys, time
from functools import partial

import jax
import jax.numpy as jnp
import optax
from flax import nnx

from course.lab.context import TrainContext
from course.lab.variants import scan_loop
from course.lab.variants.nnx_mlp import MLP
from course.titanic import load_titanic


def reference(split, epochs, batch=32, seed=0, lr=1e-3, hidden=64):
    """The fused loop written independently of the lab: one jitted call for the whole run,
    `nnx.split` state through two nested `lax.scan`s, one `jax.random.permutation` per
    epoch, the ragged last batch padded and masked (28 steps an epoch, not the lab's 27)."""
    model = MLP(split.x_train.shape[1], hidden, rngs=nnx.Rngs(params=seed))
    graphdef, params = nnx.split(model)
    tx = optax.adam(lr)
    opt_state = tx.init(params)
    x, y = jnp.asarray(split.x_train), jnp.asarray(split.y_train)
    n = y.shape[0]
    steps = -(-n // batch)
    pad = steps * batch - n

    def loss_fn(p, xb, yb, mb):
        per_example = optax.sigmoid_binary_cross_entropy(nnx.merge(graphdef, p)(xb), yb)
        return jnp.sum(per_example * mb) / jnp.sum(mb)

    @jax.jit
    def run(params, opt_state, key):
        def epoch(carry, k):
            order = jnp.concatenate([jax.random.permutation(k, n), jnp.zeros(pad, jnp.int32)])
            mask = (jnp.arange(steps * batch) < n).astype(jnp.float32)
            batches = (x[order].reshape(steps, batch, -1), y[order].reshape(steps, batch),
                       mask.reshape(steps, batch))

            def step(c, b):
                p, o = c
                loss, grads = jax.value_and_grad(loss_fn)(p, *b)
                updates, o = tx.update(grads, o, p)
                return (optax.apply_updates(p, updates), o), loss

            carry, losses = jax.lax.scan(step, carry, batches)
            return carry, losses.mean()

        (params, opt_state), losses = jax.lax.scan(epoch, (params, opt_state), jax.random.split(key, epochs))
        return params, opt_state, losses

    key = jax.random.key(seed)
    compiled = run.lower(params, opt_state, key).compile()
    wall, cpu = time.perf_counter(), time.process_time()
    jax.block_until_ready(compiled(params, opt_state, key))
    return time.perf_counter() - wall, time.process_time() - cpu


class Clocked(TrainContext):
    """The lab's own clock marks, with the process's CPU time read at the same moments."""

    def mark_compiled(self, block=None):
        super().mark_compiled(block)
        self.cpu_compiled = time.process_time()

    def mark_done(self, block=None):
        super().mark_done(block)
        self.cpu_done = time.process_time()


def lab(split, epochs):
    ctx = Clocked(split=split, epochs=epochs)
    scan_loop.train(ctx)
    return ctx.timing.done - ctx.timing.compiled, ctx.cpu_done - ctx.cpu_compiled


epochs, rounds = int(sys.argv[1]), int(sys.argv[2])
split = load_titanic(seed=0)
times = {"lab": [], "reference": []}
for _ in range(rounds):  # interleaved, so that a busy moment of the machine hits both
    times["lab"].append(lab(split, epochs))
    times["reference"].append(reference(split, epochs))
out = {k: {"wall": statistics.median(w for w, _ in v), "cpu": statistics.median(c for _, c in v),
           "wall_all": [w for w, _ in v], "cpu_all": [c for _, c in v]} for k, v in times.items()}
# Each round's two runs are neighbours in time: their ratio cancels most of what else the machine does.
out["paired_wall_ratio"] = statistics.median(a[0] / b[0] for a, b in zip(times["lab"], times["reference"]))
out["paired_cpu_ratio"] = statistics.median(a[1] / b[1] for a, b in zip(times["lab"], times["reference"]))
print(json.dumps(out))
'''

FUSED_TARGET = 1.2


def compare_fused(epochs: int, rounds: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", FUSED_CHILD, str(epochs), str(rounds)], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return {"status": "failed", "error": proc.stderr.strip()[-2000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_variant(name: str, epochs: int, eager_epochs: int, seed: int) -> dict:
    config = {"variants": [name], "epochs": epochs, "seed": seed}
    if name == "nnx_eager" and eager_epochs < epochs:
        config["epochs_per_variant"] = {name: eager_epochs}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(config), str(out)], env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0 or not out.exists():
            return {"variant": name, "status": "failed", "error": proc.stderr.strip()[-2000:]}
        report = json.loads(out.read_text())
    result = report["results"][0]
    result["hardware"], result["versions"] = report["hardware"], report["versions"]
    return result


def chunk_note(epochs: int) -> str:
    from course.lab.variants.scan_loop import chunk_size

    chunk = chunk_size(epochs)
    return f"{epochs // chunk} call{'s' if epochs // chunk != 1 else ''} of {chunk} epochs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=500)
    parser.add_argument("--eager-epochs", type=int, default=20)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--accuracy-seeds", type=int, default=3,
                        help="seeds whose mean test accuracy is compared for target 2 (default 3)")
    parser.add_argument("--fused-rounds", type=int, default=5,
                        help="interleaved runs of jax_scan and an independent fused loop to compare (0: skip)")
    parser.add_argument("--json", metavar="PATH", help="write the measurements and verdicts as JSON")
    args = parser.parse_args(argv)
    names = [v for v in args.variants.split(",") if v]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown or args.epochs < 1 or args.eager_epochs < 1 or args.accuracy_seeds < 1:
        parser.error(f"bad --variants {unknown} or epoch count")

    results = {}
    for name in names:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        results[name] = run_variant(name, args.epochs, min(args.eager_epochs, args.epochs), args.seed)
    first = next((r for r in results.values() if "hardware" in r), None)
    if first:
        print(f"\nHardware: {first['hardware']['summary']}")
        print("Versions: " + ", ".join(f"{k} {first['versions'][k]}" for k in ("jax", "flax", "optax", "torch")))

    n = args.epochs
    steady = {k: r["ms_per_epoch"] * n / 1000 for k, r in results.items() if r.get("status") == "ok"}
    print(f"\n{'variant':<16} {'input':<26} {'epochs':>9} {'compile s':>9} {'steady s':>10} "
          f"{'ref s':>7} {'x ref':>6} {'acc':>6}  verdict (steady <= 1.5x ref)")
    verdicts: list[tuple[str, bool]] = []
    for name, r in results.items():
        if r.get("status") != "ok":
            print(f"{name:<16} FAILED: {r.get('error', '')[:300]}")
            verdicts.append((f"{name} ran", False))
            continue
        ref = REFERENCE_S[name] * n / 500
        ran = f"{r['epochs']}/{n} extrap." if r["extrapolated"] else str(r["epochs"])
        ok = steady[name] <= 1.5 * ref
        verdicts.append((f"{name} within 1.5x of its reference ({ref:.2f} s)", ok))
        # Eager variants compile nothing: their compile column is empty, as in the lab.
        compile_s = "" if r["compile_s"] is None else f"{r['compile_s']:.2f}"
        print(f"{name:<16} {r['input_path']:<26} {ran:>9} {compile_s:>9} {steady[name]:>10.2f} "
              f"{ref:>7.2f} {steady[name] / ref:>6.2f} {r['test_accuracy']:>6.3f}  {'PASS' if ok else 'MISS'}")

    # The lab's one definition of a speed-up (course.lab.numbers), as in `jaxlings train` and the app.
    ms = {k: results[k]["ms_per_epoch"] for k in steady}
    print("\nSpeed-ups (ratio of steady-state ms per epoch):")
    if "nnx_eager" in steady:
        for name in steady:
            print(f"  {name:<16} {fmt_speedup(speedup(ms['nnx_eager'], ms[name])):>8} faster than nnx_eager"
                  + (f"   {fmt_speedup(speedup(ms['torch_eager'], ms[name])):>7} faster than torch_eager"
                     if "torch_eager" in steady else ""))
    if "nnx_eager" in steady and "nnx_jit" in steady:
        ratio = speedup(ms["nnx_eager"], ms["nnx_jit"])
        verdicts.append((f"@nnx.jit >= 25x faster than NNX eager (measured {ratio:.1f}x)", ratio >= 25))
    jax_done = [k for k in JAX_VARIANTS if k in steady]
    if "torch_eager" in steady and jax_done:
        fastest = min(jax_done, key=steady.get)
        ratio = speedup(ms["torch_eager"], ms[fastest])
        accuracy = {}
        for name in ("torch_eager", fastest):
            accs = [results[name]["test_accuracy"]]
            for k in range(1, args.accuracy_seeds):
                print(f"running {name} with seed {args.seed + k} (accuracy) ...", file=sys.stderr, flush=True)
                extra = run_variant(name, n, n, args.seed + k)
                if extra.get("status") == "ok":
                    accs.append(extra["test_accuracy"])
            accuracy[name] = accs
        print(f"\nTest accuracy over seeds {args.seed}..{args.seed + args.accuracy_seeds - 1}:")
        for name, accs in accuracy.items():
            print(f"  {name:<16} mean {sum(accs) / len(accs):.3f}   " + " ".join(f"{a:.3f}" for a in accs))
        means = {k: sum(v) / len(v) for k, v in accuracy.items()}
        gap = abs(means[fastest] - means["torch_eager"])
        verdicts.append((f"fastest JAX variant ({fastest}) >= 40x faster than PyTorch eager "
                         f"(measured {ratio:.1f}x, mean accuracy gap {100 * gap:.1f} points <= 2)",
                         ratio >= 40 and gap <= 0.02 and all(len(v) == args.accuracy_seeds
                                                             for v in accuracy.values())))

    if "nnx_tree" in steady and "nnx_split_merge" in steady:
        ratio = ms["nnx_tree"] / ms["nnx_split_merge"]
        verdicts.append((f"nnx_tree within {TREE_TARGET}x of nnx_split_merge per epoch (measured {ratio:.2f}x)",
                         ratio <= TREE_TARGET))

    fused = None
    if "jax_scan" in names and args.fused_rounds > 0:
        print(f"running jax_scan and an independent fused loop, {args.fused_rounds} rounds ...", file=sys.stderr,
              flush=True)
        load_before = os.getloadavg()[0]
        fused = compare_fused(n, args.fused_rounds)
        if "lab" in fused:
            lab, ref = fused["lab"], fused["reference"]
            ratio = fused["paired_wall_ratio"]
            print(f"\nFused loop, {n} epochs, {args.fused_rounds} interleaved rounds in one process "
                  f"(load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after):")
            print(f"  lab jax_scan (27 equal batches, {chunk_note(n)})  median wall {lab['wall']:.3f} s  "
                  f"cpu {lab['cpu']:.3f} s")
            print(f"  independent loop (28 batches, ragged one masked, one call)  median wall {ref['wall']:.3f} s  "
                  f"cpu {ref['cpu']:.3f} s")
            print(f"  ratio lab / independent (median of the rounds' ratios): wall {ratio:.2f}, "
                  f"cpu {fused['paired_cpu_ratio']:.2f}")
            verdicts.append((f"jax_scan within {FUSED_TARGET}x of an independent fused loop "
                             f"(measured {ratio:.2f}x)", ratio <= FUSED_TARGET))
        else:
            print(f"\nFused-loop comparison FAILED: {fused.get('error', '')[:300]}")
            verdicts.append(("fused-loop comparison ran", False))

    print("\nTargets:")
    for text, ok in verdicts:
        print(f"  {'PASS' if ok else 'MISS'}  {text}")
    if args.json:
        Path(args.json).write_text(json.dumps({"epochs": n, "results": results, "fused_comparison": fused,
                                               "targets": [{"target": t, "pass": ok} for t, ok in verdicts]},
                                              indent=2))
    return 0 if all(ok for _, ok in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())

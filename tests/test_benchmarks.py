"""The benchmark scripts still run and print their ratios (on tiny settings).

Their targets are not asserted here: timings on a shared machine are noise in a
test. A script exits 1 when a target is missed, 0 when all are met; anything
else (a traceback, a usage error) means the script itself is broken.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CASES = {
    "check_latency.py": (["--rounds", "1", "--exercises", "functional_ops,jit_branch", "--cli-sample", "1",
                          "--warm-window", "5"],
                         ["load average at the start", "warm check -> verdict: median", "first check of each exercise: median", "target: median <= 1.0 s",
                          "target: p90 <= 2.0 s", "target: every exercise <= 3 s",
                          "target: first checks' median <= 1.5 s",
                          "one-off `jaxlings check`: median", "the same check again: median", "one-off/warm",
                          "target: one-off median <= 2.5 s",
                          "target: idle footprint <= 400 MB", "load average at the end"]),
    # Under a busy loop, each figure beside its quiet value (one cheap exercise, no one-off checks).
    "check_latency.py --busy": (["--rounds", "1", "--exercises", "jit_branch", "--cli-sample", "0", "--no-footprint",
                                 "--busy", "1"],
                                ["under 1 busy loop(s)", "figure", "ratio", "warm median",
                                 "target: every time under load <= 3x its quiet time"]),
    "check_seeds.py": (["--seeds", "1", "--first-seed", "1", "--exercises", "clip_gradient"],
                       ["load average at the start", "runs, median", "wrong verdicts: 0"]),
    "idle_footprint.py": (["--exercise", "fx_scale", "--course", "tests/fixtures/course", "--warm-window", "5"],
                          ["warm, for JAXLINGS_SERVER_WARM s", "idle footprint (5 s after the check here)",
                           "target: idle footprint <= 400 MB RSS: PASS", "target: ends with its workspace: PASS"]),
    "evaluator_cost.py": (["--calls", "2"], ["cold: first request", "warm run: median", "idle evaluator RSS"]),
    "tui_startup.py": (["--runs", "1"], ["first frame / 1 s target", "heavy modules imported before the first frame"]),
    "train_variants.py": (
        ["--epochs", "3", "--eager-epochs", "1", "--accuracy-seeds", "1", "--fused-rounds", "1",
         "--variants", "torch_eager,nnx_eager,nnx_jit,nnx_tree,nnx_split_merge,jax_scan"],
        ["faster than nnx_eager", "@nnx.jit >= 25x faster than NNX eager", "mean accuracy gap",
         "nnx_tree within 1.5x of nnx_split_merge per epoch", "ratio lab / independent",
         "of an independent fused loop"],
    ),
    "isolation_cost.py": (["--runs", "1", "--cold-runs", "1", "--tiers", "process,unshare",
                           "--exercise", "count_params"],
                          ["process: start", "count_params   warm check", "fx_scale       warm check"]),
    "precision_defaults.py": (["--size", "128"], ["max rel. error vs float64", "JAX vs PyTorch at defaults",
                                                  "torch.backends.cudnn.allow_tf32"]),
    "grade_class.py": (["--submissions", "2", "--exercises", "functional_ops"],
                       ["grader's own overhead per submission", "target < 3 s", "speed-up with 2 jobs",
                        "sampled in the tree", "peak memory: worker", "shard+merge overhead"]),
}


@pytest.mark.parametrize("script", sorted(CASES))
def test_benchmark_runs_and_prints_its_ratios(script):
    args, expected = CASES[script]
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script.split()[0]), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1), out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    for text in expected:
        assert text in out, f"{script} no longer prints {text!r}:\n{out[-3000:]}"

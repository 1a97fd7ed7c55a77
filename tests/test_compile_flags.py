"""The XLA options a check compiles with (course.engine.compile_flags): on every side of a check
or on none, never in what a lesson or the lab starts, and never one this jaxlib does not know."""

import json
import os
import subprocess
import sys
from pathlib import Path

from course.engine import compile_flags

ROOT = Path(__file__).resolve().parent.parent
FLAG = compile_flags.FLAGS[0]


def _run(code: str, **env) -> dict:
    """`code` in a fresh interpreter (a backend that has not started); its last line is JSON."""
    full = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAXLINGS_FAST_COMPILE")}
    full.update(env, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


_SIDES = """
import json, os
from course.engine import compile_flags
{before}
adopted = compile_flags.adopt()
from course.engine.sandbox import child_environment
from course.engine.isolation import child_env
print(json.dumps(dict(
    adopted=adopted,
    own=os.environ.get("XLA_FLAGS"),
    learner=child_env(home="/h", tmp="/t").get("XLA_FLAGS", ""),
    sharded=child_env(home="/h", tmp="/t", extra={{"XLA_FLAGS": "--xla_force_host_platform_device_count=4"}})["XLA_FLAGS"],
    trusted=child_environment(None, {{}}).get("XLA_FLAGS", ""),
)))
"""


def test_a_check_process_and_its_children_compile_alike():
    got = _run(_SIDES.format(before=""))
    assert got["adopted"] is True
    assert got["own"] is None  # restored once XLA has read it: a lesson or the lab started from here gets none
    assert got["learner"] == FLAG and got["trusted"] == FLAG
    # A check's own XLA_FLAGS (several host devices) keeps them, with the check's options added.
    assert got["sharded"].split() == ["--xla_force_host_platform_device_count=4", FLAG]


def test_a_backend_started_without_them_keeps_every_side_on_the_defaults():
    got = _run(_SIDES.format(before="import jax; jax.numpy.zeros(1).block_until_ready()"))
    assert got["adopted"] is False
    assert FLAG not in got["learner"] and FLAG not in got["trusted"] and FLAG not in got["sharded"]


def test_they_can_be_turned_off():
    got = _run(_SIDES.format(before=""), JAXLINGS_FAST_COMPILE="0")
    assert got["adopted"] is False and got["learner"] == "" and got["trusted"] == ""


def test_the_users_own_setting_of_a_flag_stands():
    assert compile_flags.merged("--xla_cpu_use_fusion_emitters=true") == "--xla_cpu_use_fusion_emitters=true"
    assert compile_flags.merged("") == FLAG
    assert compile_flags.merged(compile_flags.merged("--a=1")) == f"--a=1 {FLAG}"


_SCATTER = """
import json, sys, jax, jax.numpy as jnp
from course.engine import compile_flags
adopted = compile_flags.adopt() if sys.argv[-1] == "adopt" else None
text = jax.jit(lambda x, i, v: x.at[i].add(v)).lower(jnp.zeros(16), jnp.arange(4), jnp.ones(4)).compile().as_text()
print(json.dumps(dict(adopted=adopted, loop="while" in text)))
"""


def test_the_process_compiles_with_them():
    """The options reach XLA in the process that adopts them, though its environment no longer
    holds them: XLA's older emitters expand a scatter into a loop, the fusion emitters do not."""
    full = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAXLINGS_FAST_COMPILE")}
    full["PYTHONPATH"] = str(ROOT)
    got = {}
    for mode in ("adopt", "plain"):
        done = subprocess.run([sys.executable, "-c", _SCATTER, mode], env=full, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        got[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == {"adopt": {"adopted": True, "loop": True}, "plain": {"adopted": None, "loop": False}}


def test_a_trusted_cache_keeps_their_programs_apart(tmp_path):
    """JAX keys a cached program on the XLA_FLAGS the environment holds, which an adopting process
    no longer does: its trusted programs go to a folder of their own."""
    code = f"""
import json, jax, jax.numpy as jnp
from pathlib import Path
from course.engine import compile_flags
from course.engine.caches import use_trusted_cache
compile_flags.adopt()
use_trusted_cache(Path({str(tmp_path)!r}))
print(json.dumps(dict(folder=jax.config.jax_compilation_cache_dir)))
"""
    assert _run(code) == {"folder": str(tmp_path / compile_flags.TRUSTED_SUBFOLDER)}


def test_a_jaxlib_not_known_to_take_them_is_never_given_them(monkeypatch):
    """XLA aborts a process whose XLA_FLAGS names a flag it does not know (jaxlib 0.11 and 0.12 do
    on this one): only a listed release gets them, and no child is started to ask the others."""
    import subprocess as sp

    with monkeypatch.context() as m:
        m.setattr(sp, "run", lambda *a, **k: (_ for _ in ()).throw(AssertionError("asked a child")))
        m.setattr(sp, "Popen", lambda *a, **k: (_ for _ in ()).throw(AssertionError("started a child")))
        for version, expected in (((0, 10), True), ((0, 11), False), ((0, 12), False), ((1, 0), False), (None, False)):
            m.setattr(compile_flags, "_supported", None)
            m.setattr(compile_flags, "_jaxlib_version", lambda v=version: v)
            assert compile_flags.supported() is expected, version
    code = """
import json
from course.engine import compile_flags
compile_flags.KNOWN = set()
adopted = compile_flags.adopt()
import jax.numpy as jnp
print(json.dumps(dict(adopted=adopted, value=float(jnp.ones(2).sum()))))
"""
    assert _run(code) == {"adopted": False, "value": 2.0}

"""Fixtures for hidden checks (see README.md in this folder).

The engine registers this module as a pytest plugin for every check run, and
hands the run's details (learner process, reference module, seed) to pytest
through a plugin named `jaxlings-run`. Checks get them through these fixtures.
"""

from __future__ import annotations

import numpy as np
import pytest

from course.engine.words import _

RUN_PLUGIN = "jaxlings-run"


def _run(request: pytest.FixtureRequest):
    run = request.config.pluginmanager.get_plugin(RUN_PLUGIN)
    if run is None:
        pytest.fail(_("hidden checks run through the course engine (`jaxlings check`), not plain pytest"))
    return run


@pytest.fixture(scope="session", autouse=True)
def _programs_within_the_time_limit(request: pytest.FixtureRequest):
    """The evaluator's time on this check's programs, all of them together, is at most the
    exercise's time limit (the learner's code has its own): a program that takes XLA minutes to
    compile, or never ends, costs the check no more."""
    from course.engine import programs

    run = request.config.pluginmanager.get_plugin(RUN_PLUGIN)
    if run is None:  # the fixtures that need the run say so
        yield
        return
    with programs.within(run.budget):
        yield


@pytest.fixture(scope="session")
def learner(request: pytest.FixtureRequest):
    """The learner's module, loaded in an isolated child process."""
    return _run(request).learner


@pytest.fixture(scope="session")
def reference(request: pytest.FixtureRequest):
    """The reference solution, with the same `call`/`probe`/`has` API as `learner`."""
    return _run(request).reference


@pytest.fixture
def seed(request: pytest.FixtureRequest) -> int:
    """This run's seed: drawn fresh, or fixed by `JAXLINGS_SEED` / the grader."""
    return _run(request).seed


@pytest.fixture
def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)

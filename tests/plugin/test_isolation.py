"""Whatever a controller does, it fails its own pytest item; the session goes on."""

from __future__ import annotations

import pytest
from escaping import DEATH_FIX, FIX, HOSTILE

PLUGIN_TIMEOUT = (
    "the case ran for more than 0.5 s of real time, the case's limit, and its worker and the "
    "processes under it were killed: the controller blocked where the watchdog could not stop "
    "it (it ignored SIGALRM, stopped the timer, or blocked in C code); expected it to return or "
    "raise; a case that needs longer may have more with --retrychaos-case-timeout SECONDS"
)
CHECKS = """
import os

import pytest


@pytest.mark.retrychaos(controller="hostile:exits")
def test_exits(retrychaos_check):
    retrychaos_check("scenarios/burst-503-clears.yaml")


@pytest.mark.retrychaos(controller="hostile:interrupts")
def test_interrupts(retrychaos_check):
    retrychaos_check("scenarios/burst-503-clears.yaml")


@pytest.mark.retrychaos(controller="hostile:raises_base")
def test_raises_base(retrychaos_check):
    retrychaos_check("scenarios/burst-503-clears.yaml")


@pytest.mark.retrychaos(controller="hostile:hard_exit")
def test_hard_exit(retrychaos_check):
    retrychaos_check("scenarios/burst-503-clears.yaml")


@pytest.mark.retrychaos(controller="hostile:kills")
def test_kills(retrychaos_check):
    retrychaos_check("scenarios/burst-503-clears.yaml")


@pytest.mark.retrychaos(controller="hostile:factory_exits")
def test_factory_exits(retrychaos_check):
    retrychaos_check("scenarios/burst-503-clears.yaml")


@pytest.mark.retrychaos(controller="reference")
def test_good_after_them(retrychaos_check):
    assert retrychaos_check("scenarios/burst-503-clears.yaml").passed
"""

WHAT = {
    "exits": f"the controller's call called sys.exit(3); {FIX}",
    "interrupts": f"the controller's call raised KeyboardInterrupt; {FIX}",
    "raises_base": (
        "the controller's call raised Custom (a BaseException, not an Exception): "
        f"custom base; {FIX}"
    ),
    "hard_exit": (
        "the controller ended the process running this case (exit code 7, as os._exit(7) "
        f"gives); {DEATH_FIX}"
    ),
    "kills": (
        "the controller ended the process running this case (killed by signal SIGKILL); "
        f"{DEATH_FIX}"
    ),
    "factory_exits": f"the controller's factory called sys.exit(6); {FIX}",
}


def failure_line(controller: str, seed: int = 1) -> str:
    """The line that names what a hostile controller did, as the item's failure shows it."""
    return f"run of scenario burst-503-clears (seed {seed}) failed (controller): {WHAT[controller]}"


@pytest.fixture
def hostile(project: pytest.Pytester) -> pytest.Pytester:
    """The user project, with controllers that try to end the session."""
    project.makepyfile(hostile=HOSTILE)
    return project


def test_each_escape_fails_its_own_check_and_the_session_goes_on(hostile: pytest.Pytester):
    """sys.exit, KeyboardInterrupt, BaseException, os._exit and SIGKILL each fail one test."""
    hostile.makepyfile(test_user_checks=CHECKS)  # a name the outer suite does not use
    result = hostile.runpytest("test_user_checks.py", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=6)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    for name in WHAT:
        line = f"E       retrychaos.testing.checks.CaseFailed: {failure_line(name)}"
        assert line in result.stdout.lines, name
    assert "Traceback" not in result.stdout.str()
    assert "/pluggy/" not in result.stdout.str()  # no traceback through the hooks


@pytest.mark.parametrize("controller", ["interrupts", "hard_exit", "kills"])
def test_a_scenario_test_that_escapes_fails_alone(hostile: pytest.Pytester, controller: str):
    """Every seed of an escaping controller fails with run's message; the user's own test still runs."""
    result = hostile.runpytest(
        "--retrychaos-scenarios",
        "scenarios/burst-503-clears.yaml",
        "--retrychaos-controller",
        f"hostile:{controller}",
        "--retrychaos-seeds",
        "2",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=1, failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    for seed in (1, 2):
        result.stdout.fnmatch_lines([failure_line(controller, seed)])
    assert "Traceback" not in result.stdout.str()


BLOCKS = """
import signal
import threading


class Blocks:
    async def call(self, tool, args, ctx):
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        signal.setitimer(signal.ITIMER_REAL, 0)
        threading.Event().wait()


def blocks(env):
    return Blocks()
"""


def test_a_scenario_test_that_switches_the_watchdog_off_and_blocks_fails_on_the_case_timeout(
    project: pytest.Pytester,
):
    """SIGALRM ignored and a real block: each scenario test fails at its case timeout, alone."""
    project.makepyfile(blocking=BLOCKS)
    result = project.runpytest(
        "--retrychaos-scenarios",
        "scenarios/burst-503-clears.yaml",
        "--retrychaos-controller",
        "blocking:blocks",
        "--retrychaos-seeds",
        "2",
        "--retrychaos-case-timeout",
        "0.5",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=1, failed=2)
    for seed in (1, 2):
        line = f"run of scenario burst-503-clears (seed {seed}) failed (controller): "
        result.stdout.fnmatch_lines([line + PLUGIN_TIMEOUT])


@pytest.mark.parametrize("given", ["nan", "0", "1e9", "soon"])
def test_the_case_timeout_accepts_only_finite_seconds_in_range(project: pytest.Pytester, given):
    """--retrychaos-case-timeout outside 0.1-86400 s is a usage error naming the range."""
    result = project.runpytest(
        "--retrychaos-scenarios", "scenarios", "--retrychaos-case-timeout", given
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: --retrychaos-case-timeout: expected real seconds from 0.1 to 86400, got {given}"]
    )


WORLD = """
import time

import pytest

import hostile

WEATHER = {"name": "weather", "method": "GET"}


def calling(factory):
    async def main(session):
        return await session.call(factory(session.env), "weather", {"city": "Lyon"})

    return main


@pytest.mark.retrychaos(tools=[WEATHER])
def test_world_exits(retrychaos_world):
    retrychaos_world.run(calling(hostile.exits))


@pytest.mark.retrychaos(tools=[WEATHER])
def test_world_interrupts(retrychaos_world):
    retrychaos_world.run(calling(hostile.interrupts))


@pytest.mark.retrychaos(tools=[WEATHER])
def test_world_raises_base(retrychaos_world):
    retrychaos_world.run(calling(hostile.raises_base))


@pytest.mark.retrychaos_isolated
@pytest.mark.retrychaos(tools=[WEATHER])
def test_world_hard_exit(retrychaos_world):
    retrychaos_world.run(calling(hostile.hard_exit))


@pytest.mark.retrychaos_isolated
@pytest.mark.retrychaos(tools=[WEATHER])
def test_world_kills(retrychaos_world):
    retrychaos_world.run(calling(hostile.kills))


@pytest.mark.retrychaos_isolated
@pytest.mark.retrychaos(tools=[WEATHER])
def test_world_isolated_assertion(retrychaos_world):
    result = retrychaos_world.run(calling(hostile.good))
    assert result == "not what came back"


@pytest.mark.retrychaos_isolated
@pytest.mark.retrychaos(tools=[WEATHER])
def test_world_isolated_good(retrychaos_world):
    assert retrychaos_world.run(calling(hostile.good))["ok"] is True


@pytest.mark.retrychaos(tools=[WEATHER])
def test_world_good_after_them(retrychaos_world):
    assert retrychaos_world.run(calling(hostile.good))["ok"] is True
    assert type(time.sleep).__name__ == "builtin_function_or_method"
"""
WORLD_WHAT = {
    "exits": f"the controller's call called sys.exit(3); {FIX}",
    "interrupts": f"the controller's call raised KeyboardInterrupt; {FIX}",
    "raises_base": (
        f"the controller's call raised Custom (a BaseException, not an Exception): custom base; {FIX}"
    ),
    "hard_exit": (
        "the controller ended the process running this test (exit code 7, as os._exit(7) "
        f"gives); {DEATH_FIX}"
    ),
    "kills": (
        "the controller ended the process running this test (killed by signal SIGKILL); "
        f"{DEATH_FIX}"
    ),
}


def test_an_escape_in_the_world_fixture_fails_its_own_test(hostile: pytest.Pytester):
    """In retrychaos_world, raised escapes fail in place; os._exit and SIGKILL fail an isolated test."""
    hostile.makepyfile(test_user_world=WORLD)
    result = hostile.runpytest("test_user_world.py", "-p", "no:cacheprovider", "-rf")
    result.assert_outcomes(passed=2, failed=6)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    for name, what in WORLD_WHAT.items():
        assert what in result.stdout.lines, name
    assert "During handling" not in result.stdout.str()
    result.stdout.fnmatch_lines(
        ["E       AssertionError: assert {'ok': True*} == 'not what came back'"]
    )


CTRL_C = """
import os
import signal

import pytest


@pytest.mark.retrychaos(tools=[{"name": "weather", "method": "GET"}])
def test_ctrl_c_during_the_run(retrychaos_world):
    async def main(session):
        os.kill(os.getpid(), signal.SIGINT)  # as a terminal's Ctrl-C reaches the process

    retrychaos_world.run(main)


def test_never_reached():
    pass
"""


def test_a_sigint_during_the_world_run_is_still_ctrl_c(hostile: pytest.Pytester):
    """A SIGINT that reaches the process during retrychaos_world.run stops the session, as Ctrl-C does."""
    hostile.makepyfile(test_user_ctrl_c=CTRL_C)
    result = hostile.runpytest_subprocess("test_user_ctrl_c.py", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*KeyboardInterrupt*", "*no tests ran*"])

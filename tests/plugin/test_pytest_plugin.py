"""The pytest plugin, driven end to end in a tiny user project."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

USER_TESTS = """
import pytest

from mycontroller import careful

WEATHER = {
    "name": "weather",
    "method": "GET",
    "faults": [{"fault": "status", "status": 503, "attempts": [1, 2]}],
}


@pytest.mark.retrychaos(tools=[WEATHER], seed=3)
def test_careful_recovers_from_two_503s(retrychaos_world):
    async def scenario(session):
        controller = careful(session.env)
        result = await session.call(controller, "weather", {"city": "Lyon"})
        return result, session.clock.now()

    result, elapsed = retrychaos_world.run(scenario)
    assert result["ok"] is True
    assert len(retrychaos_world.requests("weather")) == 3
    assert 0.6 < elapsed < 8.0


@pytest.mark.retrychaos(controller="mycontroller:careful")
def test_shipped_scenario_holds(retrychaos_check):
    result = retrychaos_check("scenarios/burst-503-clears.yaml", seed=2)
    assert result.passed


@pytest.mark.retrychaos(controller="mycontroller:careless")
def test_careless_is_caught(retrychaos_check):
    scenario = {
        "name": "hammered",
        "description": "Two 503s on a read.",
        "tools": [WEATHER],
        "workload": {"calls": [{"tool": "weather"}]},
    }
    with pytest.raises(AssertionError, match="- backoff_bounded_and_jittered: task a0-t0"):
        retrychaos_check(scenario)
"""


def scenario_args(controller: str, seeds: str) -> list[str]:
    """The plugin's options for the project's scenarios."""
    return [
        "--retrychaos-scenarios",
        "scenarios",
        "--retrychaos-controller",
        controller,
        "--retrychaos-seeds",
        seeds,
    ]


def test_plugin_is_inert_without_its_options(project):
    """Without --retrychaos-scenarios no scenario is collected and nothing else changes."""
    result = project.runpytest("-v")
    result.assert_outcomes(passed=1)
    assert "yaml" not in result.stdout.str()


def test_each_scenario_and_seed_is_one_test(project):
    """Two scenarios and two seeds make four passing tests beside the user's own."""
    result = project.runpytest(*scenario_args("mycontroller:careful", "2"), "-v")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(
        [
            "scenarios/ambiguous-create.yaml::ambiguous-create[[]seed1[]] PASSED*",
            "scenarios/ambiguous-create.yaml::ambiguous-create[[]seed2[]] PASSED*",
            "scenarios/burst-503-clears.yaml::burst-503-clears[[]seed1[]] PASSED*",
            "scenarios/burst-503-clears.yaml::burst-503-clears[[]seed2[]] PASSED*",
        ]
    )


def test_a_violation_fails_with_readable_lines(project):
    """A failing scenario names the invariant, what was expected and the replay command."""
    result = project.runpytest(*scenario_args("mycontroller:careless", "1,5"), "-m", "retrychaos")
    result.assert_outcomes(failed=4, deselected=1)
    result.stdout.fnmatch_lines(
        [
            "*controller 'mycontroller:careless' violated * on scenario ambiguous-create (seed 5):",
            "- no_duplicate_side_effects: task a0-t0: op a0-t0-c0 committed a second side effect*",
            "    expected: *; actual: *",
            (
                "replay: retrychaos run */scenarios/ambiguous-create.yaml "
                "--controller mycontroller:careless --seed 5"
            ),
        ]
    )
    assert "harness/runner.py" not in result.stdout.str()


def test_junitxml_k_and_x_work_as_for_any_test(project):
    """-k selects scenario tests, -x stops at the first failure, JUnit records the violation."""
    result = project.runpytest(
        *scenario_args("mycontroller:careless", "3"),
        "-k",
        "ambiguous",
        "-x",
        "--junitxml=report.xml",
    )
    result.assert_outcomes(failed=1)
    report = ET.parse(project.path / "report.xml")  # noqa: S314 - written by the run above
    suite = report.getroot().find("testsuite")
    assert suite is not None
    (case,) = suite.iter("testcase")
    assert case.get("name") == "ambiguous-create[seed1]"
    failure = case.find("failure")
    assert failure is not None
    assert "no_duplicate_side_effects" in (failure.text or "")
    properties = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert properties == {"retrychaos_controller": "mycontroller:careless", "retrychaos_seed": "1"}


# Three pytest processes of their own (coverage sees none of them): the
# in-process scenario tests measure the same collection in the main step.
@pytest.mark.slow
def test_xdist_runs_the_scenarios_in_workers(project):
    """With -n 2 every scenario test is collected and run by the workers."""
    result = project.runpytest_subprocess("-n", "2", *scenario_args("mycontroller:careful", "2"))
    result.assert_outcomes(passed=5)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--retrychaos-scenarios", "nowhere"],
            "ERROR: --retrychaos-scenarios: no such file or directory: nowhere",
        ),
        (
            scenario_args("mycontroller:careful", "0"),
            (
                "ERROR: --retrychaos-seeds: expected a count N >= 1 (seeds 1..N), a "
                "comma-separated list of seeds >= 0 (3,7,11) or a range A-B of seeds >= 0 "
                "with A <= B (1-10), got '0'"
            ),
        ),
        (
            scenario_args("mycontroller:missing", "1"),
            (
                "ERROR: --retrychaos-controller: controller 'mycontroller:missing': module "
                "'mycontroller' has no attribute 'missing'; expected a factory "
                "'def factory(env) -> controller'"
            ),
        ),
    ],
)
def test_bad_options_are_usage_errors(project, args, message):
    """A missing path, bad seeds or an unknown controller stop the run before collection."""
    result = project.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.lines


def test_a_bad_scenario_file_is_a_collection_error(project):
    """A scenario file that does not load is reported in the loader's words, not a traceback."""
    path = project.path / "scenarios" / "ambiguous-create.yaml"
    text = path.read_text(encoding="utf-8")
    bad = text.replace("timeout_after_commit, attempts: [1]", "status, status: 700")
    path.write_text(bad, encoding="utf-8")
    result = project.runpytest(*scenario_args("mycontroller:careful", "1"))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            (
                "*scenarios/ambiguous-create.yaml: tools[[]0[]].faults[[]0[]].status: expected an "
                "HTTP status from 400 to 599, got 700*"
            )
        ]
    )


def test_fixtures_give_the_world_and_the_checks_to_user_tests(project):
    """retrychaos_world runs a coroutine among simulated tools; retrychaos_check runs scenarios."""
    project.makepyfile(test_user=USER_TESTS)
    result = project.runpytest("test_user.py")
    result.assert_outcomes(passed=3)


def test_retrychaos_world_without_tools_says_how_to_fix_it(project):
    """The world fixture without tools fails with the marker to add."""
    project.makepyfile(test_user="def test_it(retrychaos_world):\n    pass\n")
    result = project.runpytest("test_user.py")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*retrychaos_world needs tools: add @pytest.mark.retrychaos(tools=*"]
    )

"""Choosing what `retrychaos run` runs: -k, --tag, --invariant and the forms of --seeds."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from retrychaos.cli.selection import keyword_matcher
from retrychaos.errors import HarnessInputError
from retrychaos.scenario.library import library_path
from retrychaos.seeds import parse_seeds

if TYPE_CHECKING:
    from pathlib import Path

SHIPPED = len(list(library_path().rglob("*.yaml")))
"""Scenarios in the shipped library (the deselected counts depend on it)."""
SEEDS_ERROR = (
    "expected a count N >= 1 (seeds 1..N), a comma-separated list of seeds >= 0 (3,7,11) "
    "or a range A-B of seeds >= 0 with A <= B (1-10), got {!r}"
)
K_FORMS = (
    "error: -k: expected words matched against suite/name, joined by and, or, not and "
    "parentheses (e.g. 'transient and not 429'), got {!r}: {}\n"
)


@pytest.mark.parametrize(
    ("raw", "seeds"),
    [
        ("3", (1, 2, 3)),
        ("1,5,9", (1, 5, 9)),
        (" 9, 1,9 ", (9, 1)),
        ("4-6", (4, 5, 6)),
        ("0-0", (0,)),
    ],
)
def test_seeds_accept_a_count_a_list_or_a_range(raw, seeds):
    """A count runs 1..N, a list exactly those (repeats dropped), a range both ends included."""
    assert parse_seeds(raw) == seeds


@pytest.mark.parametrize("raw", ["0", "-3", "x", "1,-2", "5-3", "1-", "-1-4", "1,,2", ""])
def test_bad_seeds_name_every_accepted_form(raw):
    """Anything else is refused with a message naming the three forms and the value."""
    with pytest.raises(ValueError, match=r"^expected a count") as caught:
        parse_seeds(raw)
    assert str(caught.value) == SEEDS_ERROR.format(raw)


@pytest.mark.parametrize(
    ("expression", "name", "expected"),
    [
        ("burst", "transient/burst-503-clears", True),
        ("BURST", "transient/burst-503-clears", True),
        ("transient and not 429", "transient/burst-503-clears", True),
        ("transient and not 429", "rate_limits/429-retry-after", False),
        ("not transient or 429", "rate_limits/429-retry-after", True),
        ("ambiguous or (transient and burst)", "transient/brownout-20pct", False),
        ("not (a or b) and c", "c", True),
        ("a or b and c", "a", True),
    ],
)
def test_k_matches_like_pytest(expression, name, expected):
    """Case-insensitive substrings of suite/name; not binds tighter than and, and than or."""
    assert keyword_matcher(expression)(name) is expected


@pytest.mark.parametrize(
    ("expression", "why"),
    [
        ("", "it is empty"),
        ("(burst", "a '(' is not closed"),
        ("burst and", "it ends where a word or '(' was expected"),
        ("or burst", "unexpected 'or' where a word was expected"),
        ("burst)", "unexpected ')'"),
        ("a b", "unexpected 'b'"),
    ],
)
def test_a_bad_k_expression_says_what_is_wrong(project: Path, cli, expression, why):
    """A malformed expression exits 2 with the expected form and where it went wrong."""
    result = cli("run", "-k", expression, cwd=project)
    assert result.returncode == 2
    assert result.stderr == K_FORMS.format(expression, why)
    with pytest.raises(HarnessInputError):
        keyword_matcher(expression)


def _ran(project: Path) -> list[tuple[str, int]]:
    runs = json.loads((project / "out" / "results.json").read_text())["runs"]
    return [(r["scenario"], r["seed"]) for r in runs]


def test_k_and_tag_select_from_the_shipped_library(project: Path, cli):
    """-k and --tag combine; the header says how many scenarios were left out."""
    result = cli(
        "run",
        "--tag",
        "transient",
        "-k",
        "burst or brownout",
        "--seeds",
        "2",
        "--report",
        "out",
        cwd=project,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == (
        f"collected 4 cases: 2 scenarios x 1 controller x 2 seeds ({SHIPPED - 2} scenarios deselected)"
    )
    assert _ran(project) == [
        ("brownout-20pct", 1),
        ("brownout-20pct", 2),
        ("burst-503-clears", 1),
        ("burst-503-clears", 2),
    ]


def test_without_seeds_each_scenario_runs_its_own(project: Path, cli):
    """No --seeds: the header says each scenario runs its own seeds (here the default three)."""
    result = cli("run", "-k", "burst-503-clears", "--report", "out", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == (
        f"collected 3 cases: 1 scenario x 1 controller x their seeds ({SHIPPED - 1} scenarios "
        "deselected)"
    )
    assert _ran(project) == [("burst-503-clears", n) for n in (1, 2, 3)]


def test_invariant_judges_only_those_and_drops_scenarios_it_cannot_judge(project: Path, cli):
    """--invariant narrows what each scenario is judged on; scenarios left with none are dropped."""
    result = cli(
        "run",
        "--tag",
        "transient",
        "--invariant",
        "backoff_bounded_and_jittered",
        "-c",
        "naive",
        "--seed",
        "1",
        "--report",
        "out",
        cwd=project,
    )
    assert result.returncode == 1
    document = json.loads((project / "out" / "results.json").read_text())
    violated = {v["invariant"] for r in document["runs"] for v in r["violations"]}
    assert violated == {"backoff_bounded_and_jittered"}
    judged = {tuple(s["invariants"]) for s in document["scenarios"].values()}
    assert judged == {("backoff_bounded_and_jittered",)}
    replay = next(x for x in result.stdout.splitlines() if x.startswith("replay:"))
    assert replay.endswith(" --invariant backoff_bounded_and_jittered")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seeds", "5-3"], "error: --seeds: " + SEEDS_ERROR.format("5-3")),
        (["--seeds", "3", "--seed", "1"], "error: give --seeds or --seed, not both"),
        (["--seed", "-1"], "error: --seed expects a seed >= 0, got -1"),
        (
            ["--tag", "nope"],
            (
                "error: --tag: expected a suite of the scenarios run (ambiguous, arguments, audit, "
                "deadlines, fleet, layered, mcp, mixed, permanent, rate_limits, transient, unknown), got nope"
            ),
        ),
        (
            ["--invariant", "no_retries"],
            (
                "error: --invariant expects an invariant id (no_request_amplification, "
                "no_duplicate_side_effects, deadline_adherence, retry_after_respected, "
                "no_retry_on_permanent, argument_errors_to_model, unknown_retried_at_most_once, "
                "unsafe_side_effects_not_replayed, idempotency_key_stable, "
                "backoff_bounded_and_jittered, breaker_sheds_load, succeeds_when_possible, "
                "honest_outcomes, audit_complete_and_redacted), got no_retries"
            ),
        ),
        (
            ["-k", "zzz", "--tag", "fleet"],
            (
                "error: no scenario matches the selection (-k zzz --tag fleet); "
                f"{SHIPPED} scenario(s) deselected"
            ),
        ),
        (["nowhere"], "error: no such file or directory: nowhere"),
        (["--jobs", "0"], "error: --jobs expects a count >= 1, got 0"),
        (["--watchdog", "0"], "error: --watchdog expects real seconds from 0.05 to 600, got 0.0"),
        (["--watchdog", "nan"], "error: --watchdog expects real seconds from 0.05 to 600, got nan"),
        (["--watchdog", "inf"], "error: --watchdog expects real seconds from 0.05 to 600, got inf"),
        (
            ["--watchdog", "1e-9"],
            "error: --watchdog expects real seconds from 0.05 to 600, got 1e-09",
        ),
        (["--max-planned-calls", "0"], "error: --max-planned-calls expects a count >= 1, got 0"),
    ],
)
def test_bad_selections_are_usage_errors(project: Path, cli, args, message):
    """Each bad value exits 2 before anything runs, naming what was expected."""
    result = cli("run", *args, "--report", "out", cwd=project)
    assert result.returncode == 2
    assert result.stderr == message + "\n"
    assert not (project / "out").exists()


def test_replay_takes_c_and_finds_a_shipped_scenario_from_any_folder(tmp_path: Path, cli):
    """`replay -c naive --scenario NAME` works outside any project, from the package data."""
    result = cli("replay", "--scenario", "burst-503-clears", "-c", "naive", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == (
        "FAILED  (retrychaos replay --scenario burst-503-clears --controller naive --seed 1)"
    )

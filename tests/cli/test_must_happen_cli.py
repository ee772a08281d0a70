"""A declared must-happen event, end to end: refused when unknown, a vacuous failure when missed."""

from __future__ import annotations

import html
import json
import textwrap
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from retrychaos.invariants.happenings import EVENTS

if TYPE_CHECKING:
    from pathlib import Path

SCENARIO = textwrap.dedent(
    """\
    name: burst
    description: A read answers 503 twice, then recovers.
    tools:
      - name: search
        method: GET
        faults:
          - {fault: status, status: 503, attempts: [1, 2]}
    workload:
      calls:
        - {tool: search, args: {q: x}}
    """
)
MISSED = (
    "vacuous run: the scenario declares that commit_deduplicated must happen, and it never did, "
    "so the run did not test what the scenario is for; expected commit_deduplicated: the "
    "service's idempotency store answered a repeated side effect instead of committing it again"
)


def test_an_unknown_event_is_an_input_error_naming_the_vocabulary(tmp_path: Path, cli):
    """`check` refuses a misspelt event with exit 2 and lists every known one."""
    (tmp_path / "burst.yaml").write_text(SCENARIO + "must_happen: [breaker_open]\n")
    result = cli("check", "burst.yaml", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [
        (
            "error: burst.yaml: must_happen[0]: expected a must-happen event (retry_made, "
            "recovered_after_failure, retry_after_honoured, commit_deduplicated, breaker_opened, "
            'arguments_fixed, model_replanned, sdk_retry_made), got "breaker_open"'
        ),
        "1 error(s) in scenario files; nothing was run.",
    ]


def test_a_missed_event_fails_the_run_in_every_report(tmp_path: Path, cli):
    """The run exits 1; the CLI, results.json, junit.xml and summary.md all say which event was missed."""
    (tmp_path / "burst.yaml").write_text(
        SCENARIO + "must_happen: [recovered_after_failure, commit_deduplicated]\n"
    )
    result = cli("run", "burst.yaml", "--seed", "1", "--report", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert f"vacuous:    {MISSED}" in result.stdout.splitlines()
    run = json.loads((tmp_path / "out" / "results.json").read_text())["runs"][0]
    assert (run["passed"], run["vacuous"]) == (False, MISSED)
    assert run["must_happen"] == {"commit_deduplicated": False, "recovered_after_failure": True}
    junit = ET.parse(tmp_path / "out" / "junit.xml")  # noqa: S314 (a file we just wrote)
    failures = junit.getroot().iter("failure")
    assert [(f.get("type"), f.get("message")) for f in failures] == [("vacuous", MISSED)]
    assert MISSED in (tmp_path / "out" / "summary.md").read_text()
    assert MISSED in html.unescape((tmp_path / "out" / "index.html").read_text())


def test_list_prints_the_vocabulary(tmp_path: Path, cli):
    """`retrychaos list` prints every must-happen event with its definition, after the verdicts."""
    lines = cli("list", cwd=tmp_path).stdout.splitlines()
    at = lines.index("must_happen events (a scenario may declare them)")
    assert lines[at - 1].startswith("  vacuous run: ")
    assert lines[at + 1 : at + 1 + len(EVENTS)] == [
        f"  {name}: {meaning}" for name, meaning in EVENTS.items()
    ]
    assert lines[at + 1 + len(EVENTS)] == "controllers"

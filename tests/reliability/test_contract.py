"""The controller gets its own copy of the contract; the harness judges from the scenario's."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def test_editing_env_contract_changes_no_verdict(project: Path, cli, runs) -> None:
    """A controller that raises its own budget in env.contract is judged as one that does not, and so is the next."""
    burst = project / "scenarios" / "burst.yaml"
    burst.write_text(burst.read_text().replace("attempts: [1, 2]", "attempts: [1, 2, 3, 4, 5]"))
    result = cli(
        "run",
        "scenarios",
        "-c",
        "hostile:greedy_edits",
        "-c",
        "hostile:greedy",
        "--seed",
        "1",
        "--jobs",
        "1",
        "--report",
        "out",
        cwd=project,
    )
    assert result.returncode == 1, result.stderr
    found = runs(project / "out")
    edits, plain = found["hostile:greedy_edits"], found["hostile:greedy"]
    assert edits["error"] is None
    assert edits["violations"] == plain["violations"]
    assert "no_request_amplification" in {v["invariant"] for v in plain["violations"]}

"""What each figure of a report means, in the words both summary.md and index.html show.

A passing run can show a task success rate far below 100% or a deadline
overrun above zero; without a word on the page a reader takes that for a
failure. The verdict is the runs passed; every other figure describes how the
runs went. The texts use Markdown backticks for code; index.html turns them
into ``<code>`` elements.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["NAIVE_HINT", "VERDICT", "Note", "notes_for", "wants_naive_hint"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Note:
    """One figure of the health metrics and what it means."""

    key: str
    """The metric's key in results.json."""
    name: str
    text: str


VERDICT: Final = (
    "**Runs passed** is the verdict: a run passes when every invariant that applies to "
    "its scenario held and the run was not vacuous (it reached a tool and, when the "
    "scenario has faults, met one, and every must_happen event it declares happened). The "
    "other figures describe how the runs went; none "
    "of them fails a run by itself."
)
"""The line that says which figure is the verdict (Markdown)."""

NOTES: Final = (
    Note(
        key="amplification",
        name="amplification",
        text="attempts that reached a server per logical call (1.0: one attempt per call), "
        "the mean over runs and the worst run. Retries within the contract raise it and fail "
        "nothing; `no_request_amplification` fails a run that goes past the contract.",
    ),
    Note(
        key="mean_attempts_per_call",
        name="attempts sent per call",
        text="the same, counting also the attempts that never reached a server "
        "(a connection that failed or timed out first).",
    ),
    Note(
        key="first_attempt_success_rate",
        name="first-attempt success",
        text="share of logical calls whose first attempt succeeded: low by design, "
        "since the scenarios inject the faults.",
    ),
    Note(
        key="task_success_rate",
        name="task success",
        text="share of tasks that ended well. Below 100% is expected in a passing run: many "
        "scenarios make some tasks impossible on purpose (a 403, a side effect that must "
        "not be replayed, an outage longer than the deadline). A task that could have "
        "succeeded and did not fails `succeeds_when_possible`.",
    ),
    Note(
        key="budget_exhaustion_rate",
        name="budget exhaustion",
        text="share of the controller's decisions that were `budget_exhausted`: it ran out "
        "of attempts for the task or the call.",
    ),
    Note(
        key="duplicate_side_effects",
        name="duplicate side effects",
        text="commits of one operation beyond the first, summed: each is a side effect that "
        "happened twice (`no_duplicate_side_effects`). It should be 0.",
    ),
    Note(
        key="breaker_opens",
        name="breaker opens",
        text="times a circuit breaker opened, from the controller's audit records (n/a when "
        "it writes none). During an outage that is the breaker shedding load, as it should.",
    ),
    Note(
        key="task_latency_p99",
        name="task latency p99",
        text="the 99th percentile of a task's time from start to end, in virtual seconds, "
        "in the worst run.",
    ),
    Note(
        key="deadline_overrun_max",
        name="deadline overrun",
        text="how long after its deadline a task still started an attempt or got its "
        "decision, in virtual seconds, in the worst run. `deadline_adherence` lets the "
        "decision come up to one attempt's client timeout late (`attempt_timeout_s`, 2 s by "
        "default) while an attempt started in time is under way, so a passing run can show "
        "up to that.",
    ),
)
"""Every health metric's note, in the order of the metrics table."""

NAIVE_HINT: Final = (
    "Every run passed. To see what a failure looks like, run the shipped anti-pattern: "
    "`retrychaos run --controller naive`."
)
"""The next step after a passing run of the reference controller (Markdown)."""


def notes_for(keys: Sequence[str]) -> list[Note]:
    """The notes of the metrics shown (``keys``: results.json keys, repeats allowed)."""
    shown = set(keys)
    return [note for note in NOTES if note.key in shown]


def wants_naive_hint(controllers: Sequence[str], *, failing: int) -> bool:
    """Whether a report should suggest naive: every run of the reference controller passed."""
    return failing == 0 and "reference" in controllers and "naive" not in controllers

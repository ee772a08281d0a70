"""The seam every executor fills: run jobs somewhere, yield results as they finish."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = ["Executor", "Work"]

Work: TypeAlias = Callable[[Any, Callable[[str], None]], Any]
"""``work(job, phase)``: what a worker does with one job (see :mod:`retrychaos.workers`)."""


class Executor(Protocol):
    """Runs ``work`` on every job, each in a worker process, and yields results as they come.

    An executor never loses a job: a job whose worker died yields
    ``on_death(index, message)`` in place of its result.
    """

    def run(
        self,
        jobs: Sequence[Any],
        work: Work,
        *,
        on_phase: Callable[[int, str], None] | None = None,
        on_death: Callable[[int, str], Any],
        on_give: Callable[[int], None] | None = None,
        on_receive: Callable[[int, Any], Any] | None = None,
    ) -> Iterator[tuple[int, Any]]:
        """Yield ``(index, result)`` for each job as it finishes, in any order.

        ``on_give(index)`` hears each job as it is handed to a worker;
        ``on_receive(index, result)``, each result as it arrives, before the
        next job is handed out where the executor can, and gives the result
        to yield.
        """
        ...

"""The local executor: worker processes on this machine (:mod:`retrychaos.workers`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..workers import run_in_workers

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from .base import Work

__all__ = ["LocalExecutor"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalExecutor:
    """Up to ``processes`` worker processes here, never more than the jobs or the CPUs.

    ``case_timeout_s``: real seconds a job may run before its worker is
    killed and the job failed (None: no limit; see :func:`run_in_workers`).
    """

    processes: int = 1
    case_timeout_s: float | None = None

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
        """Yield ``(index, result)`` as each job finishes (see :func:`run_in_workers`)."""
        processes = max(1, min(self.processes, len(jobs), os.cpu_count() or 1))
        return run_in_workers(
            jobs,
            work,
            processes=processes,
            on_phase=on_phase,
            on_death=on_death,
            on_give=on_give,
            case_timeout_s=self.case_timeout_s,
            on_receive=on_receive,
        )

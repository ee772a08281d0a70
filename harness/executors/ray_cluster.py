"""The Ray executor: every case on a Ray cluster, in a worker process as it runs locally.

A case goes to the cluster as one Ray task, but the Ray worker does not run
it itself: it hands it to a worker process of its own
(:class:`~retrychaos.workers.WorkerPool`, the local executor's workers,
kept from task to task). So a controller that ends its process
(``os._exit``, a signal) ends that process only, and its case fails with
the words a local run gives (:func:`~retrychaos.workers.death_message`).
The Ray worker starts those processes with ``spawn``: it runs threads of
its own, and forking a threaded process can leave the child hung on a lock.

A Ray worker that dies (killed, out of memory, its node lost) is Ray's to
handle: the task runs again on another worker, up to :data:`TRIES` times in
all, and a case whose Ray worker died on every try fails with a message that
says so. Results come back as tasks finish (``ray.wait``), so the driver
writes the report as they arrive. A few tasks per CPU of the cluster are in
flight at a time: a sweep of many cases does not sit in the cluster's
object store all at once.

The per-case real-time limit (``--case-timeout``) holds here too: the Ray
worker waits on its own worker process for at most that long, then kills it
and the processes under it, and the case fails as on the local workers.

Each task carries the driver's ``sys.path``; a Ray worker adds the folders
that exist on its node, so a controller found by ``package.module:factory``
here is found there too (on a cluster of several machines, install the
controller's package, and this version of retrychaos, on every node).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..errors import ClusterError
from ..workers import WorkerPool, death_message

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from types import ModuleType

    from .base import Work

__all__ = ["CONNECT_S", "TRIES", "RayExecutor", "connect_ray"]

TRIES: Final = 3
"""Runs of one case's task, in all, before a Ray worker's death is the case's failure."""

CONNECT_S: Final = 5.0
"""Real seconds to wait for a given cluster address to answer before giving up."""

_PER_CPU = 2
"""Tasks in flight per CPU of the cluster: one running, one ready to start."""

INSTALL_HINT: Final = "pip install 'retrychaos[ray]'"

_POOLS: dict[Any, WorkerPool] = {}
"""A Ray worker's own worker processes, by the work they do (kept between tasks)."""


def _run_task(
    work: Work, job: Any, paths: Sequence[str], case_timeout_s: float | None = None
) -> tuple[str, Any]:
    """In a Ray worker: run ``job`` in a worker process; ``("done", result)``, ``("died", why)``.

    A job past ``case_timeout_s`` real seconds has its worker killed and is
    ``("died", timeout_message(...))``, as on the local workers.
    """
    for path in paths:
        if path not in sys.path and Path(path).is_dir():
            sys.path.append(path)
    pool = _POOLS.get(work)
    if pool is None:
        pool = _POOLS[work] = WorkerPool(work, context=multiprocessing.get_context("spawn"))
    died: list[str] = []
    result = pool.run(job, on_death=died.append, case_timeout_s=case_timeout_s)
    return ("died", died[0]) if died else ("done", result)


def lost_message(tries: int, error: str) -> str:
    """A case whose Ray worker died on every try (``error``: Ray's name for what happened)."""
    return (
        f"{death_message(None)}; the Ray worker running it died on each of {tries} tries "
        f"({error}), so it was not run again"
    )


class RayExecutor:
    """Cases as Ray tasks on the cluster :func:`connect_ray` joined; :meth:`close` leaves it."""

    def __init__(
        self, ray: ModuleType, address: str | None, *, case_timeout_s: float | None = None
    ) -> None:
        """Use the ``ray`` module, already connected (``address``: where, or None for local).

        ``case_timeout_s``: real seconds a case may run on its Ray worker
        before the worker process running it is killed and the case failed.
        """
        self._ray = ray
        self.address = address
        self.case_timeout_s = case_timeout_s

    @property
    def cpus(self) -> int:
        """The CPUs the cluster has (at least 1)."""
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def describe(self) -> str:
        """Where cases run, in words."""
        where = f"the Ray cluster at {self.address}" if self.address else "a local Ray instance"
        return f"executor: {where} ({self.cpus} CPU{'s' * (self.cpus != 1)})"

    def run(
        self,
        jobs: Sequence[Any],
        work: Work,
        *,
        on_phase: Callable[[int, str], None] | None = None,  # noqa: ARG002 (phases stay on the worker)
        on_death: Callable[[int, str], Any],
        on_give: Callable[[int], None] | None = None,
        on_receive: Callable[[int, Any], Any] | None = None,
    ) -> Iterator[tuple[int, Any]]:
        """Yield ``(index, result)`` as each job finishes (``on_give``: as it is submitted).

        ``on_receive(index, result)`` gives the result to yield; a window of
        jobs is already submitted, so no worker waits for it.
        """
        heard = on_receive or (lambda _index, result: result)
        ray = self._ray
        task = ray.remote(_run_task).options(
            max_retries=TRIES - 1, retry_exceptions=False, num_cpus=1
        )
        paths = tuple(p for p in sys.path if p)
        window = _PER_CPU * self.cpus
        queue = list(enumerate(jobs))
        queue.reverse()
        pending: dict[Any, int] = {}
        try:
            while queue or pending:
                while queue and len(pending) < window:
                    index, job = queue.pop()
                    if on_give is not None:
                        on_give(index)
                    pending[task.remote(work, job, paths, self.case_timeout_s)] = index
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    index = pending.pop(ref)
                    try:
                        kind, payload = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        lost = on_death(index, lost_message(TRIES, type(exc).__name__))
                        yield index, heard(index, lost)
                        continue
                    yield (
                        index,
                        heard(index, on_death(index, payload) if kind == "died" else payload),
                    )
        finally:
            # An interrupt, or the caller stopped listening: the cluster stops too.
            for ref in pending:
                ray.cancel(ref, force=True)

    def close(self) -> None:
        """Leave the cluster (a local instance this process started ends with it)."""
        self._ray.shutdown()


def _import_ray() -> ModuleType:
    try:
        import ray  # noqa: PLC0415 (an optional extra, needed only by --executor ray)
    except ImportError:
        raise ClusterError(
            f"--executor ray needs Ray, which is not installed; install it with: {INSTALL_HINT}"
        ) from None
    return ray


def _reachable(address: str) -> None:
    """Fail within :data:`CONNECT_S` real seconds when nothing answers at ``address``."""
    target = address.removeprefix("ray://")
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise ClusterError(
            f"Expected a Ray cluster address HOST:PORT (or ray://HOST:PORT, or auto) "
            f"but got address={address!r}"
        )
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_S):
            pass
    except OSError as exc:
        why = exc.strerror or f"no answer within {CONNECT_S:g} s"
        raise ClusterError(
            f"the Ray cluster at {address} cannot be reached ({why}); "
            "expected a running cluster there (`ray start --head` starts one), or no "
            "--ray-address and no RAY_ADDRESS to run on a local Ray instance"
        ) from None


def connect_ray(
    address: str | None, *, cpus: int, case_timeout_s: float | None = None
) -> RayExecutor:
    """Join the cluster at ``address`` (else ``RAY_ADDRESS``), or start a local one of ``cpus``.

    Raises:
        ClusterError: Ray is not installed, or the cluster cannot be reached.
    """
    ray = _import_ray()
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address is not None and address != "auto":
        _reachable(address)
    try:
        ray.init(
            address=address,
            num_cpus=None if address else cpus,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
        )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ClusterError(
            f"could not join the Ray cluster at {address or 'a local Ray instance'}: {exc}; "
            "expected a running cluster of the same Ray version"
        ) from None
    return RayExecutor(ray, address, case_timeout_s=case_timeout_s)

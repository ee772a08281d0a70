"""The Ray executor's driver loop and task, against a stand-in for the ``ray`` module.

The real cluster is tests/executors/test_ray.py's (slow); these check, in a
moment, what the driver does with each kind of answer a task can give.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import SimpleNamespace
from typing import Any

import pytest

from retrychaos.errors import ClusterError
from retrychaos.executors import TRIES, connect_ray, ray_cluster
from retrychaos.executors.ray_cluster import RayExecutor, _run_task, lost_message
from retrychaos.workers import death_message, timeout_message


class RayError(Exception):
    """Ray's root of errors a task's result can raise."""


class WorkerCrashedError(RayError):
    """What Ray raises for a task whose worker died on every try."""


class Ref:
    """A task's result, ready at once."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer


class Task:
    """``ray.remote(_run_task)``: records its options, runs each job when submitted."""

    def __init__(self) -> None:
        self.options_given: dict[str, Any] = {}

    def options(self, **kwargs: Any) -> Task:
        self.options_given = kwargs
        return self

    def remote(self, work: Any, job: str, paths: tuple[str, ...], _limit: float | None) -> Ref:
        assert sys.path[0] in paths
        if job == "lost":
            return Ref(WorkerCrashedError("gone"))
        if job == "died":
            return Ref(("died", death_message(7)))
        return Ref(("done", work(job, lambda _what: None)))


class FakeRay:
    """The parts of the ``ray`` module the executor uses; results come back newest first."""

    exceptions = SimpleNamespace(RayError=RayError)

    def __init__(self, cpus: int = 1) -> None:
        self.cpus = cpus
        self.task = Task()
        self.in_flight: list[int] = []
        self.cancelled: list[Ref] = []
        self.inits: list[dict[str, Any]] = []
        self.down = False

    def init(self, **kwargs: Any) -> None:
        self.inits.append(kwargs)

    def remote(self, function: Any) -> Task:
        assert function is _run_task
        return self.task

    def wait(self, refs: list[Ref], num_returns: int) -> tuple[list[Ref], list[Ref]]:
        self.in_flight.append(len(refs))
        return refs[-num_returns:], refs[:-num_returns]

    def get(self, ref: Ref) -> Any:
        if isinstance(ref.answer, Exception):
            raise ref.answer
        return ref.answer

    def cancel(self, ref: Ref, *, force: bool) -> None:
        self.cancelled.append(ref)

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": float(self.cpus)}

    def shutdown(self) -> None:
        self.down = True


def _upper(job: str, _phase: Any) -> str:
    return job.upper()


def test_every_job_yields_once_with_deaths_and_lost_workers_as_their_failures():
    """A done task is its result, a died one on_death(death), a lost one on_death(tries)."""
    fake = FakeRay(cpus=1)
    executor = RayExecutor(fake, None)  # type: ignore[arg-type]
    jobs = ["a", "died", "b", "lost", "c"]
    found = dict(executor.run(jobs, _upper, on_death=lambda i, why: f"{i}: {why}"))
    assert found == {
        0: "A",
        1: "1: " + death_message(7),
        2: "B",
        3: "3: " + lost_message(TRIES, "WorkerCrashedError"),
        4: "C",
    }
    assert fake.task.options_given == {
        "max_retries": TRIES - 1,
        "retry_exceptions": False,
        "num_cpus": 1,
    }
    assert max(fake.in_flight) == 2  # two tasks per CPU in flight, never the whole sweep
    assert fake.cancelled == []


def test_a_driver_that_stops_listening_cancels_the_tasks_in_flight():
    """Closing the stream early (Ctrl-C, a caller that gives up) cancels what is pending."""
    fake = FakeRay(cpus=2)
    stream = RayExecutor(fake, None).run(["a", "b", "c"], _upper, on_death=lambda i, w: w)  # type: ignore[arg-type]
    next(stream)
    stream.close()
    assert len(fake.cancelled) == 2


def test_the_lost_message_says_how_many_tries_and_what_ray_saw():
    """A case whose Ray worker died every time says so, after the local death words."""
    assert lost_message(3, "NodeDiedError") == (
        "the controller ended the process running this case (closed its connection to the "
        "harness); a controller must return a result or a decision, or raise an Exception, "
        "never end its process; the Ray worker running it died on each of 3 tries "
        "(NodeDiedError), so it was not run again"
    )


def test_connecting_without_an_address_starts_a_local_instance_of_the_given_cpus(monkeypatch):
    """No --ray-address and no RAY_ADDRESS: ray.init() with num_cpus; close shuts it down."""
    fake = FakeRay(cpus=3)
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    executor = connect_ray(None, cpus=3)
    assert fake.inits[0]["address"] is None
    assert fake.inits[0]["num_cpus"] == 3
    assert executor.describe() == "executor: a local Ray instance (3 CPUs)"
    executor.close()
    assert fake.down


def test_auto_joins_without_a_reachability_check_and_a_refusal_is_a_cluster_error(monkeypatch):
    """RAY_ADDRESS=auto goes to ray.init as is; an init that fails exits as a ClusterError."""
    fake = FakeRay()

    def refuse(**kwargs: Any) -> None:
        raise ConnectionError("Could not find any running Ray instance.")

    fake.init = refuse  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setenv("RAY_ADDRESS", "auto")
    with pytest.raises(ClusterError) as caught:
        connect_ray(None, cpus=1)
    assert str(caught.value) == (
        "could not join the Ray cluster at auto: Could not find any running Ray instance.; "
        "expected a running cluster of the same Ray version"
    )


def _hard_exit(job: str, _phase: Any) -> str:
    if job == "exit":
        os._exit(7)
    if job == "block":
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        threading.Event().wait()
    return f"{job} in {os.getpid()}"


def test_a_task_runs_its_job_in_a_worker_process_that_may_die_alone(monkeypatch):
    """In the Ray worker: a job runs in a spawned worker; os._exit or the case timeout is "died"."""
    monkeypatch.setattr(ray_cluster, "_POOLS", {})
    kind, text = _run_task(_hard_exit, "a", tuple(sys.path))
    assert kind == "done"
    assert text != f"a in {os.getpid()}"
    assert _run_task(_hard_exit, "exit", ()) == ("died", death_message(7))
    assert _run_task(_hard_exit, "b", ())[0] == "done"  # a new worker took over
    assert _run_task(_hard_exit, "block", (), 0.5) == ("died", timeout_message(0.5))
    # A new worker takes over after a case timeout. Its limit is generous: a worker
    # spawned on a loaded machine may take longer than half a second to start.
    assert _run_task(_hard_exit, "c", (), 60.0)[0] == "done"
    for pool in ray_cluster._POOLS.values():
        pool.close()

"""Worker processes outlive the jobs they run: a job that ends its process fails alone."""

from __future__ import annotations

import multiprocessing
import os
import signal

import pytest

from retrychaos.workers import Retire, death_message, run_in_workers


def _work(job: str, phase) -> object:
    phase(f"running {job}")
    if job == "exit":
        os._exit(9)
    if job == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if job == "retire":
        return Retire(f"{job} done, pid {os.getpid()}")
    return f"{job} done"


def test_a_dead_worker_fails_only_its_job_and_the_rest_go_on() -> None:
    """Jobs after a worker's death run in a new worker; every job yields exactly once."""
    phases: list[tuple[int, str]] = []
    jobs = ["a", "exit", "b", "kill", "c"]
    found = dict(
        run_in_workers(
            jobs,
            _work,
            processes=1,
            on_phase=lambda i, what: phases.append((i, what)),
            on_death=lambda i, message: f"died: {message}",
        )
    )
    assert found == {
        0: "a done",
        1: "died: " + death_message(9),
        2: "b done",
        3: "died: " + death_message(-signal.SIGKILL),
        4: "c done",
    }
    assert phases == [(i, f"running {job}") for i, job in enumerate(jobs)]


def test_a_retiring_worker_is_replaced() -> None:
    """A job that asks its worker to retire gets its result; the next job runs in another process."""
    found = dict(run_in_workers(["retire", "retire"], _work, processes=1, on_death=lambda i, m: m))
    pids = {found[0].rsplit(" ", 1)[1], found[1].rsplit(" ", 1)[1]}
    assert len(pids) == 2


def test_death_messages_say_how_the_process_ended() -> None:
    """An exit code, a signal and a lost connection each read as what happened."""
    assert death_message(7) == (
        "the controller ended the process running this case (exit code 7, as os._exit(7) "
        "gives); a controller must return a result or a decision, or raise an Exception, "
        "never end its process"
    )
    assert "(killed by signal SIGKILL)" in death_message(-9)
    assert "(killed by signal 99)" in death_message(-99)
    assert "(closed its connection to the harness)" in death_message(None)


def test_a_ctrl_c_as_a_worker_is_handed_its_job_leaves_no_worker_behind() -> None:
    """A SIGINT that comes between a worker's start and its bookkeeping is handled after: the worker is killed."""
    before = set(multiprocessing.active_children())
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            for _ in run_in_workers(
                ["a", "b"],
                _work,
                processes=1,
                on_death=lambda _i, message: message,
                on_give=lambda _i: os.kill(os.getpid(), signal.SIGINT),
            ):
                pass
    finally:
        signal.signal(signal.SIGINT, previous)
    assert set(multiprocessing.active_children()) - before == set()

"""What a case that lost its worker says: the worker's death, or the case's real-time limit.

Kept apart from :mod:`retrychaos.workers` (which re-exports both) so that
the parent's loop stays within a module's length.
"""

from __future__ import annotations

import signal

__all__ = ["death_message", "timeout_message"]


def death_message(exitcode: int | None) -> str:
    """Say how a worker ended while it ran a case (``exitcode`` as multiprocessing gives it)."""
    if exitcode is not None and exitcode < 0:
        try:
            how = f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            how = f"killed by signal {-exitcode}"
    elif exitcode is None:
        how = "closed its connection to the harness"
    else:
        how = f"exit code {exitcode}, as os._exit({exitcode}) gives"
    return (
        f"the controller ended the process running this case ({how}); a controller "
        "must return a result or a decision, or raise an Exception, never end its process"
    )


def timeout_message(limit_s: float, *, flag: str = "--case-timeout") -> str:
    """Say that a case ran past its real-time limit and was killed; ``flag`` sets the limit."""
    return (
        f"the case ran for more than {limit_s:g} s of real time, the case's limit, and its "
        "worker and the processes under it were killed: the controller blocked where the "
        "watchdog could not stop it (it ignored SIGALRM, stopped the timer, or blocked in C "
        "code); expected it to return or raise; a case that needs longer may have more "
        f"with {flag} SECONDS"
    )

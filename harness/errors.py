"""The harness's exceptions, one root.

::

    HarnessError
    ├── HarnessInputError          bad input from the user: exit code 2
    │   ├── ClusterError           --executor ray cannot start: Ray missing, cluster unreachable
    │   ├── ControllerLoadError    --controller names nothing loadable
    │   │   └── ClientFamilyError  a controller declares no known client family
    │   ├── McpUnavailable         a scenario serves tools over MCP, the mcp SDK is missing
    │   ├── ReportInputError       a report folder's results.json or trace is unreadable
    │   │   └── MergeError         report folders that are not the shards of one run
    │   └── ScenarioError          a scenario file is invalid (every issue, with file and line)
    ├── RunAborted                 a run could not finish; the controller is to blame
    │   ├── DeadlockError          every task waits and no timer is pending
    │   ├── LivelockError          the loop spins at one virtual instant, time never moves
    │   ├── StepBudgetError        the loop ran past the case's step budget
    │   └── RealTimeBlockError     the controller blocked the loop in real time
    └── InternalError              the harness itself failed: exit code 3

Six exceptions stand outside the root on purpose; none reaches a user as
an error of the harness::

    BaseException
    ├── WatchdogInterrupt          raised into code that holds the loop in real time;
    │                              a BaseException, so a controller's ``except
    │                              Exception`` cannot swallow it (retrychaos.world.watchdog)
    └── ControllerEscape           ends a case whose controller cannot be read (its
                                   ``call`` raises when read); a BaseException, so the
                                   case ends at once (retrychaos.escape)
    SystemExit
    └── ThreadStopped              raised in a baton thread whose run is over, so that
                                   it unwinds and ends; a SystemExit, so a controller's
                                   ``except Exception`` lets it through (retrychaos.world.baton)
    AssertionError
    ├── CaseFailed                 a property-based case failed: test runners show a
    │                              test failure (retrychaos.testing.checks)
    └── NotServed                  a request to a tool's host that no endpoint of it
                                   serves, refused as respx refuses one for httpx
                                   (retrychaos.world.families)
    Exception
    └── _CaseFailed                the fuzzer's private signal that makes Hypothesis
                                   shrink a failing scenario (retrychaos.fuzz)
    MarkedYAMLError (PyYAML)
    └── LimitError                 a scenario file past one of the reader's bounds
                                   (retrychaos.scenario.yamlio), translated into a
                                   ScenarioError at once

``ReportInputError`` lives in :mod:`retrychaos.report.errors`,
``ScenarioError`` in :mod:`retrychaos.scenario.errors` and ``McpUnavailable``
in :mod:`retrychaos.mcp.require`, next to the code that raises them.
"""

from __future__ import annotations


class HarnessError(Exception):
    """Root of every error the harness raises on purpose."""


class HarnessInputError(HarnessError):
    """The user gave the harness something it cannot use (a file, a flag, a path)."""


class ClusterError(HarnessInputError):
    """A cluster executor cannot start: its extra is missing or the cluster is unreachable."""


class ControllerLoadError(HarnessInputError):
    """``--controller`` does not name a loadable controller factory."""


class ClientFamilyError(ControllerLoadError):
    """A controller (its factory or the object it returns) declares an unknown ``client_family``.

    On the factory it is found before anything runs; on the object, once the
    factory has run: the run records it as an input error (``error_kind``
    ``input``) and ``retrychaos run`` exits 2 with its message.
    """


class RunAborted(HarnessError):
    """A run stopped before its workload finished, through the controller's doing."""


class DeadlockError(RunAborted):
    """Every task of the run is waiting and no virtual timer is pending."""


class LivelockError(RunAborted):
    """The loop ran too many iterations at one virtual instant: time would never move.

    A controller that spins (``while True: await asyncio.sleep(0)``) never
    blocks the loop, so the real-time watchdog never fires, and never lets
    virtual time pass, so the horizon is never reached: the loop counts its
    iterations at one instant instead, which gives the same verdict on every
    machine.
    """


_STEP_BUDGET = (
    "the loop ran {n} iterations, the case's step budget, and stopped at virtual time "
    "{at:.9f} s: the controller keeps the run busy without finishing it (e.g. "
    "`await asyncio.sleep(1e-9)` in a loop); expected it to finish within the budget, "
    "which grows with agents x tasks x the contract's attempts per task"
)


class StepBudgetError(RunAborted):
    """The loop ran more iterations than the case's step budget (see budget.step_budget_for).

    A controller that moves time by a nanosecond per step (``while True:
    await asyncio.sleep(1e-9)``) escapes the livelock bound and would need
    hours to reach the horizon: the budget, in loop iterations and in
    proportion to the case's planned work, ends it on every machine alike.
    """

    @classmethod
    def spent(cls, iterations: int, at_s: float) -> StepBudgetError:
        """The error for a run stopped after ``iterations`` at virtual time ``at_s``."""
        return cls(_STEP_BUDGET.format(n=iterations, at=at_s))


class RealTimeBlockError(RunAborted):
    """Code under test held the event loop for too long in real time."""


class InternalError(HarnessError):
    """The harness failed: a bug of ours, never blamed on the controller."""

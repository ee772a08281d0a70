"""The ``retrychaos_world`` fixture, and the ``retrychaos_isolated`` marker: escapes fail one test.

``retrychaos_world.run(main)`` runs the test's own coroutine, and with it the
controller, in the test's process: the test body is the user's code, so it
cannot be sent to a worker as a scenario test is. What a controller does
there ends as that test's failure, never the session's, in two ways:

- Always: an escape that raises (``sys.exit``, ``KeyboardInterrupt``, any
  other ``BaseException``) out of ``run`` fails the test with the words
  ``retrychaos run`` uses. The run restores the clock and the patched time
  functions on its way out, so the next test starts clean. A
  ``KeyboardInterrupt`` is the controller's unless a SIGINT reached the
  process during ``run``: then it is Ctrl-C, and ends the session as usual.
  pytest's own outcomes (``pytest.fail``, ``skip``, ``xfail``, ``exit``) pass.
- With ``@pytest.mark.retrychaos_isolated``: the test function runs in a
  forked child process (its fixtures are set up and torn down in the
  session's process, and the child gets a copy). A controller that ends
  its process (``os._exit``, a signal, ``os.kill`` of its own pid with
  SIGINT or SIGKILL) fails that test with the words ``retrychaos run``
  uses; the child ignores SIGINT, so Ctrl-C still ends the session. What
  the child changes in memory (a fixture's object, a module's global) does
  not reach the session's process. Needs ``os.fork`` (POSIX).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import warnings
from typing import TYPE_CHECKING, Any, Final

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from .testing.world import VirtualWorld

__all__ = ["ISOLATED", "pytest_pyfunc_call", "retrychaos_world"]

ISOLATED: Final = "retrychaos_isolated"
_OUTCOMES = (pytest.fail.Exception, pytest.skip.Exception, pytest.exit.Exception)


@contextlib.contextmanager
def _sigint_seen() -> Iterator[list[bool]]:
    """Note whether a SIGINT reaches this process in the block (then it is Ctrl-C, not a raise)."""
    seen: list[bool] = []

    def interrupted(_signum: int, _frame: object) -> None:
        seen.append(True)
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGINT, interrupted)
    except ValueError:  # not the main thread: no signal handler of ours
        yield seen
        return
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous)


def _guarded(world: VirtualWorld) -> VirtualWorld:
    """``world`` whose ``run`` turns a controller's escape into this test's failure."""
    from .escape import escape_message  # noqa: PLC0415

    plain = world.run

    def run(main: Callable[..., Any], **limits: float) -> Any:
        __tracebackhide__ = True
        with _sigint_seen() as ctrl_c:
            try:
                return plain(main, **limits)
            except Exception:
                raise
            except _OUTCOMES:
                raise
            except BaseException as exc:
                if isinstance(exc, KeyboardInterrupt) and ctrl_c:
                    raise
                message = escape_message(exc)
        pytest.fail(message, pytrace=False)  # out of the handler: no "during handling" chain

    world.run = run  # type: ignore[method-assign]
    return world


@pytest.fixture
def retrychaos_world(request: pytest.FixtureRequest) -> VirtualWorld:
    """A world with the marker's ``tools``, ``contract`` and ``seed`` (escapes fail the test)."""
    from .pytest_plugin import MARKER, marker_kwargs  # noqa: PLC0415
    from .testing.world import VirtualWorld  # noqa: PLC0415

    kwargs = marker_kwargs(request)
    tools = kwargs.get("tools")
    if not tools:
        pytest.fail(
            f"retrychaos_world needs tools: add @pytest.mark.{MARKER}(tools=[{{'name': "
            "'weather', 'method': 'GET'}]) to the test (scenario-file mappings or ToolSpec)",
            pytrace=False,
        )
    world = VirtualWorld(tools, contract=kwargs.get("contract"), seed=int(kwargs.get("seed", 0)))
    return _guarded(world)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run a ``retrychaos_isolated`` test function in a forked child; its end is the test's."""
    if pyfuncitem.get_closest_marker(ISOLATED) is None:
        return None
    __tracebackhide__ = True
    names = pyfuncitem._fixtureinfo.argnames  # noqa: SLF001 (what pytest itself passes)
    arguments = {name: pyfuncitem.funcargs[name] for name in names}
    kind, text = _forked(lambda: pyfuncitem.obj(**arguments), pyfuncitem)
    if kind == "skip":
        pytest.skip(text)
    if kind == "fail":
        pytest.fail(text, pytrace=False)
    return True


def _forked(test: Callable[[], object], item: pytest.Function) -> tuple[str, str]:
    """``("pass"|"fail"|"skip", text)``: how ``test()`` ended in a forked child."""
    from .workers import death_message  # noqa: PLC0415

    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        # The child only runs the test and leaves with os._exit: the threads
        # of this process (xdist's among them) are not needed there.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover (the child: coverage is not saved by os._exit)
        os.close(read_end)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        outcome = _outcome(test, item)
        with os.fdopen(write_end, "wb") as out:
            pickle.dump(outcome, out)
        os._exit(0)
    os.close(write_end)
    try:
        with os.fdopen(read_end, "rb") as child:
            data = child.read()
        _, status = os.waitpid(pid, 0)
    except BaseException:
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        raise
    if not data:
        code = os.waitstatus_to_exitcode(status)
        return "fail", death_message(code).replace("this case", "this test")
    kind, text = pickle.loads(data)  # noqa: S301 (our own child's bytes)
    return str(kind), str(text)


def _outcome(
    test: Callable[[], object], item: pytest.Function
) -> tuple[str, str]:  # pragma: no cover
    """Run ``test`` (in the child) and say how it ended, as text the parent shows."""
    from .escape import escape_message  # noqa: PLC0415

    try:
        test()
    except pytest.skip.Exception as exc:
        return "skip", str(exc.msg)
    except (Exception, pytest.fail.Exception) as exc:
        info = pytest.ExceptionInfo.from_exception(exc)
        return "fail", str(item.repr_failure(info))
    except BaseException as exc:
        return "fail", escape_message(exc)
    return "pass", ""

"""The pytest plugin: run retrychaos scenarios inside a user's own test suite.

Installed with the package (entry point ``pytest11``), and inert until asked:
without ``--retrychaos-scenarios`` it collects nothing and changes nothing; it
only registers its options, its marker and its fixtures.

Scenario files as tests::

    pytest --retrychaos-scenarios scenarios/ --retrychaos-controller mypkg.retry:factory

adds one test per scenario file x seed (``burst-503-clears[seed1]``, node id
``scenarios/transient/burst-503-clears.yaml::burst-503-clears[seed1]``),
which fails with every violated invariant in plain words plus the command
that replays it. ``--retrychaos-seeds N`` runs seeds 1..N (``3,7,11``:
exactly those; ``4-6``: 4 to 6); by default a scenario's own ``seeds``, else 1, 2 and 3.
They are ordinary pytest items: ``-k``, ``-m retrychaos_scenario`` (only
them), ``-x``, ``--junitxml`` and xdist work as for any test.
``--retrychaos-report DIR`` also writes ``retrychaos run --report DIR``'s folder
for the scenario tests that ran (:mod:`retrychaos.pytest_report`); a test
whose controller changes it fails (:mod:`retrychaos.pytest_watch`).

Each scenario test, and each ``retrychaos_check`` call, runs its case in a
worker process, as ``retrychaos run`` does: whatever the controller does
(``sys.exit``, ``KeyboardInterrupt``, another ``BaseException``,
``os._exit``, killing its process), that test fails with the message
``retrychaos run`` gives, and the session goes on. The workers are kept
from one test to the next (one process start per session, and per xdist
worker), and ended with the session.

Markers: ``retrychaos`` configures the fixtures of a test (below) and is also
carried by every scenario test, so ``-m retrychaos`` selects both;
``retrychaos_scenario`` is carried by the scenario tests alone.

The world in your own tests (fixtures):

- ``retrychaos_controller``: the controller under test (a ``ControllerRef``),
  from ``@pytest.mark.retrychaos(controller=...)``, else
  ``--retrychaos-controller``, else ``reference``;
- ``retrychaos_check``: ``retrychaos_check(scenario, seed=1)`` runs a scenario
  (a ``Scenario``, a file path or a file-format mapping) against that
  controller and fails the test readably on a violation;
- ``retrychaos_world``: a :class:`retrychaos.testing.world.VirtualWorld` with the
  tools, contract and seed of ``@pytest.mark.retrychaos(tools=[...],
  contract={...}, seed=0)``: ``retrychaos_world.run(coroutine_function)``.
  It runs in the test's own process; :mod:`retrychaos.pytest_world` says
  what of a controller's escapes it catches there, and what
  ``@pytest.mark.retrychaos_isolated`` (the test in a forked child) adds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from .pytest_options import DEFAULT_CONTROLLER, parse_case_timeout, pytest_addoption
from .pytest_watch import pytest_runtest_call
from .pytest_world import ISOLATED, pytest_pyfunc_call, retrychaos_world
from .seeds import parse_seeds

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterator

    from .controllers.registry import ControllerRef
    from .runner import CaseResult
    from .workers import WorkerPool
    from .world.spec import Scenario

# The harness is imported only when a retrychaos option, marker or fixture is
# used: every pytest run of a project with retrychaos installed loads this module.

__all__ = [
    "ScenarioFile",
    "ScenarioItem",
    "marker_kwargs",
    "pytest_addoption",
    "pytest_pyfunc_call",
    "pytest_runtest_call",
    "retrychaos_world",
]

MARKER: Final = "retrychaos"
SCENARIO_MARKER: Final = "retrychaos_scenario"
SUFFIXES: Final = (".yaml", ".yml")


@dataclass(frozen=True, slots=True, kw_only=True)
class _Options:
    """What the command line asked for (the plugin is active when ``paths`` is not empty)."""

    paths: tuple[Path, ...]
    controller: str | None
    seeds: tuple[int, ...] | None
    report: Path | None
    """The report folder to write (absolute), or None."""
    case_timeout_s: float
    """Real seconds a case may run before its worker is killed and the test failed."""


_OPTIONS = pytest.StashKey[_Options]()
_CONTROLLERS = pytest.StashKey[dict[str, "ControllerRef"]]()
_POOL = pytest.StashKey["WorkerPool"]()


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker; when scenarios are asked for, check the options and add the paths."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}(controller=None, tools=None, contract=None, seed=None): configure the "
        "retrychaos fixtures for this test (retrychaos_controller, retrychaos_world); "
        f"also carried by every scenario test the plugin collects (-m {SCENARIO_MARKER} "
        "selects those alone)",
    )
    config.addinivalue_line(
        "markers",
        f"{SCENARIO_MARKER}: carried only by the scenario tests the plugin collects from "
        "--retrychaos-scenarios",
    )
    config.addinivalue_line(
        "markers",
        f"{ISOLATED}: run this test function in a forked child process, so that a controller "
        "ending its process (os._exit, a signal) fails this test alone",
    )
    raw_paths: list[str] = config.getoption("retrychaos_scenarios") or []
    raw_report: str | None = config.getoption("retrychaos_report")
    options = _Options(
        paths=tuple(Path(p) for p in raw_paths),
        controller=config.getoption("retrychaos_controller"),
        seeds=_parse_seeds(config.getoption("retrychaos_seeds")),
        report=None if raw_report is None else config.invocation_params.dir / raw_report,
        case_timeout_s=parse_case_timeout(config.getoption("retrychaos_case_timeout")),
    )
    config.stash[_OPTIONS] = options
    config.stash[_CONTROLLERS] = {}
    if raw_report is not None:
        _start_report(config, options, raw_report)
    if not options.paths:
        return
    missing = [str(p) for p in options.paths if not p.exists()]
    if missing:
        msg = f"--retrychaos-scenarios: no such file or directory: {', '.join(missing)}"
        raise pytest.UsageError(msg)
    _controller(config, options.controller)  # fail fast, before collecting anything
    # Collect the scenario paths like paths given on the command line: node ids,
    # -k, --deselect and xdist then treat them as any other test.
    for path in options.paths:
        if str(path) not in config.args:
            config.args.append(str(path))


def _start_report(config: pytest.Config, options: _Options, raw: str) -> None:
    if not options.paths:
        msg = (
            f"--retrychaos-report {raw}: the report covers the scenario tests, and none are "
            "collected; add --retrychaos-scenarios PATH"
        )
        raise pytest.UsageError(msg)
    if options.report is not None and options.report.exists() and not options.report.is_dir():
        msg = f"--retrychaos-report: expected a directory, got a file: {raw}"
        raise pytest.UsageError(msg)
    if hasattr(config, "workerinput"):
        return  # an xdist worker: its results travel to the controller, which writes
    from .pytest_report import ReportCollector  # noqa: PLC0415

    collector = ReportCollector(options.report or Path(raw), str(Path(raw)))
    config.pluginmanager.register(collector, "retrychaos-report")


def _parse_seeds(raw: str | None) -> tuple[int, ...] | None:
    if raw is None:
        return None
    try:
        return parse_seeds(raw)
    except ValueError as exc:
        raise pytest.UsageError(f"--retrychaos-seeds: {exc}") from None


def _controller(config: pytest.Config, name: str | None) -> ControllerRef:
    """Resolve a controller once per session (a bad name is a usage error)."""
    from .controllers.registry import resolve  # noqa: PLC0415
    from .errors import ControllerLoadError  # noqa: PLC0415

    chosen = name or DEFAULT_CONTROLLER
    cache = config.stash[_CONTROLLERS]
    if chosen not in cache:
        try:
            cache[chosen] = resolve(chosen)
        except ControllerLoadError as exc:
            raise pytest.UsageError(f"--retrychaos-controller: {exc}") from None
    return cache[chosen]


def _pool(config: pytest.Config) -> WorkerPool:
    """The session's workers, made at the first case."""
    from .suite import case_pool  # noqa: PLC0415

    pool = config.stash.get(_POOL, None)
    if pool is None:
        pool = config.stash[_POOL] = case_pool()
    return pool


def _run(config: pytest.Config, scenario: Scenario, controller: str, seed: int) -> CaseResult:
    """Run one case in the session's worker (started at the first case, kept for the next)."""
    from .suite import Case, run_one  # noqa: PLC0415

    case = Case(scenario=scenario, controller=controller, seed=seed)
    limit_s = config.stash[_OPTIONS].case_timeout_s
    return run_one(
        case, _pool(config), case_timeout_s=limit_s, timeout_flag="--retrychaos-case-timeout"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """End the session's workers before anything else ends the session (the report among it).

    The report folder is written after the last controller's process is
    gone, so nothing a controller left running can write into it then.
    """
    pool = session.config.stash.get(_POOL, None)
    if pool is not None:
        pool.close()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> ScenarioFile | None:
    """Collect a scenario file that lies under a ``--retrychaos-scenarios`` path."""
    options = parent.config.stash.get(_OPTIONS, None)
    if options is None or not options.paths or file_path.suffix not in SUFFIXES:
        return None
    resolved = file_path.resolve()
    for root in options.paths:
        base = root.resolve()
        if resolved == base or base in resolved.parents:
            # Outside the rootdir pytest would give the file an empty node id; use its path.
            rootpath = parent.config.rootpath.resolve()
            inside = rootpath == resolved or rootpath in resolved.parents
            nodeid = None if inside else resolved.as_posix()
            return ScenarioFile.from_parent(parent, path=file_path, nodeid=nodeid)
    return None


class ScenarioFile(pytest.File):
    """One scenario file: one test per seed."""

    def collect(self) -> Iterator[ScenarioItem]:
        """Load the scenario and yield one item per seed."""
        from .scenario import ScenarioError, load_scenario  # noqa: PLC0415

        options = self.config.stash[_OPTIONS]
        try:
            scenario = load_scenario(self.path)
        except ScenarioError as exc:
            # A CollectError is shown as its message alone: the loader's words, no traceback.
            raise self.CollectError("\n".join(str(e) for e in exc.errors)) from None
        seeds = options.seeds or scenario.seeds or (1, 2, 3)
        for seed in seeds:
            yield ScenarioItem.from_parent(
                self, name=f"{scenario.name}[seed{seed}]", scenario=scenario, seed=seed
            )


class ScenarioItem(pytest.Item):
    """One scenario x seed, run against the session's controller."""

    def __init__(self, *, scenario: Scenario, seed: int, **kwargs: Any) -> None:
        """Hold the scenario and the seed (pytest builds items through ``from_parent``)."""
        super().__init__(**kwargs)
        self.scenario = scenario
        self.seed = seed
        self.result: CaseResult | None = None
        self.add_marker(MARKER)
        self.add_marker(SCENARIO_MARKER)

    def runtest(self) -> None:
        """Run the case in a worker process; a violation or a failed run fails the test."""
        from .testing.checks import CaseFailed, describe_failure  # noqa: PLC0415

        options = self.config.stash[_OPTIONS]
        controller = _controller(self.config, options.controller)
        result = _run(self.config, self.scenario, controller.name, self.seed)
        self.result = result
        self.user_properties.append(("retrychaos_controller", controller.name))
        self.user_properties.append(("retrychaos_seed", self.seed))
        if not result.passed:
            raise CaseFailed(describe_failure(result), result)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        """Show violations as plain lines instead of a traceback into the harness."""
        from .testing.checks import CaseFailed  # noqa: PLC0415

        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the test comes from: the scenario file."""
        return self.path, None, f"retrychaos scenario {self.scenario.name}, seed {self.seed}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach a scenario test's result to its report when a report folder is asked for."""
    report = yield
    wanted = call.when == "call" and item.config.stash[_OPTIONS].report is not None
    if wanted and isinstance(item, ScenarioItem) and item.result is not None:
        from .pytest_report import PAYLOAD, case_payload  # noqa: PLC0415

        # An extra report attribute: xdist carries it from a worker to the controller.
        setattr(report, PAYLOAD, case_payload(item.result, item.scenario))
    return report


def marker_kwargs(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The keyword arguments of the test's ``retrychaos`` marker (none: empty)."""
    marker = request.node.get_closest_marker(MARKER)
    if marker is None:
        return {}
    if marker.args:
        pytest.fail(
            f"@pytest.mark.{MARKER} takes keyword arguments only, got {marker.args!r}",
            pytrace=False,
        )
    return dict(marker.kwargs)


@pytest.fixture
def retrychaos_controller(request: pytest.FixtureRequest) -> ControllerRef:
    """The controller under test: the marker's ``controller``, the option's, or ``reference``."""
    name = marker_kwargs(request).get("controller")
    options = request.config.stash[_OPTIONS]
    try:
        return _controller(request.config, name or options.controller)
    except pytest.UsageError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def retrychaos_check(
    request: pytest.FixtureRequest,
    retrychaos_controller: ControllerRef,
) -> Callable[..., CaseResult]:
    """A function that runs a scenario against the controller and fails readably on a violation.

    ``retrychaos_check(scenario, seed=1, invariants=None)``: ``scenario`` is a
    ``Scenario``, a path to a scenario file, or a mapping in the file format.
    The case runs in the session's worker process, by the controller's name.
    """
    from .scenario import load_scenario, scenario_from_dict  # noqa: PLC0415
    from .testing.checks import judge_case  # noqa: PLC0415
    from .world.spec import Scenario  # noqa: PLC0415

    def check(
        scenario: Scenario | Path | str | Mapping[str, Any],
        seed: int = 1,
        *,
        invariants: list[str] | None = None,
    ) -> CaseResult:
        __tracebackhide__ = True
        if isinstance(scenario, Mapping):
            scenario = scenario_from_dict(scenario)
        elif not isinstance(scenario, Scenario):
            scenario = load_scenario(Path(scenario))
        result = _run(request.config, scenario, retrychaos_controller.name, seed)
        return judge_case(result, invariants=invariants)

    return check

"""What a trace recorded as rows instead of events would save (docs/performance-history.md).

    python benchmarks/trace_rows.py --agents 1000 --rounds 2
    valgrind --tool=callgrind python benchmarks/trace_rows.py --agents 200 \
        --rounds 1 --impl minimal --variant rows   # and --variant events

Runs storm (``benchmarks/storm.yaml``, resized) in this process, alternating
two recorders, and prints the CPU time of each:

- ``events``: the recorder as shipped, one :class:`TraceEvent` per event;
- ``rows``: the same recorder keeping one plain tuple per event
  (``at, kind, agent, task, call, op, tool, data``; ``seq`` is the position),
  then turning the rows into the very same events, as the judge, the metrics
  and the trace file read them (``rebuild_s``).

Rows pay only if what they save while recording exceeds what rebuilding the
events costs, that is, only if the judge reads the rows themselves.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VARIANTS = ("events", "rows")
CONTROLLERS = {"minimal": "benchmarks.storm_controller:factory", "reference": "reference"}


def _rows_recorder(rows: list[tuple[Any, ...]]) -> Any:
    """A ``record`` that appends one tuple per event to ``rows`` (the keep mode only)."""
    from retrychaos.world.clock import NS_PER_S  # noqa: PLC0415

    def record(  # noqa: PLR0917 (the recorder's own positional signature)
        self: Any, kind: str, agent: Any, task: Any, call: Any, op: Any, tool: Any, data: Any
    ) -> None:
        clock = self._clock
        ns = clock._ns if clock is not None else self._now_ns()  # noqa: SLF001
        if ns != self._last_ns:
            self._last_ns = ns
            self._last_at = round(ns / NS_PER_S, 9)
        self._seq += 1
        rows.append((self._last_at, kind, agent, task, call, op, tool, data))

    return record


def _rebuild(rows: list[tuple[Any, ...]], events: list[Any]) -> None:
    """Append to ``events`` the events ``rows`` stand for, built as the recorder builds them."""
    from retrychaos.world.trace import EVENT_SETTERS, TraceEvent  # noqa: PLC0415

    s_seq, s_at, s_kind, s_agent, s_task, s_call, s_op, s_tool, s_data = EVENT_SETTERS
    new, append = object.__new__, events.append
    for seq, (at, kind, agent, task, call, op, tool, data) in enumerate(rows):
        event = new(TraceEvent)
        s_seq(event, seq)
        s_at(event, at)
        s_kind(event, kind)
        s_agent(event, agent)
        s_task(event, task)
        s_call(event, call)
        s_op(event, op)
        s_tool(event, tool)
        s_data(event, data)
        append(event)


def one(impl: str, agents: int, variant: str) -> dict[str, Any]:
    """Simulate storm once with ``variant``'s recorder; return its CPU times."""
    from retrychaos.controllers.registry import resolve  # noqa: PLC0415
    from retrychaos.runner import simulate  # noqa: PLC0415
    from retrychaos.scenario import load_paths  # noqa: PLC0415
    from retrychaos.world.recorder import Recorder  # noqa: PLC0415

    scenario = load_paths([HERE / "storm.yaml"])[0][0]
    workload = dataclasses.replace(scenario.workload, agents=agents)
    scenario = dataclasses.replace(scenario, workload=workload)
    rows: list[tuple[Any, ...]] = []
    shipped = Recorder.record
    if variant == "rows":
        Recorder.record = _rows_recorder(rows)  # type: ignore[method-assign]
    try:
        gc.collect()
        cpu = time.process_time()
        # No real-time watchdog: under callgrind one loop step may take seconds for real.
        controller = resolve(CONTROLLERS[impl])
        simulation = simulate(scenario, controller, 1, trace="keep", watchdog_s=0)
        simulate_s = time.process_time() - cpu
    finally:
        Recorder.record = shipped  # type: ignore[method-assign]
    rebuild_s = 0.0
    if variant == "rows" and simulation.recorder is not None:
        gc.disable()  # the judge runs under the quiet collector: so does rebuilding
        try:
            cpu = time.process_time()
            _rebuild(rows, simulation.recorder.events)
            rebuild_s = time.process_time() - cpu
        finally:
            gc.enable()
    count = len(simulation.events)
    simulation.discard()
    return {
        "impl": impl,
        "variant": variant,
        "events": count,
        "simulate_s": round(simulate_s, 3),
        "rebuild_s": round(rebuild_s, 3),
        "total_s": round(simulate_s + rebuild_s, 3),
    }


def main(argv: list[str] | None = None) -> int:
    """Alternate the two recorders ``--rounds`` times per controller; print one line a run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--impl", action="append", choices=sorted(CONTROLLERS))
    parser.add_argument(
        "--variant", action="append", choices=VARIANTS, help="one of them only (for callgrind)"
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE.parent))
    from retrychaos.runner import prepare  # noqa: PLC0415

    prepare()
    for impl in args.impl or sorted(CONTROLLERS):
        for _ in range(args.rounds):
            for variant in args.variant or VARIANTS:
                print(one(impl, args.agents, variant), flush=True)  # noqa: T201 (the output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

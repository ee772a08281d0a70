"""What storm would cost if parts of the harness cost nothing (docs/performance.md).

    python benchmarks/storm_budget.py --agents 1000 --rounds 3

Runs storm (``benchmarks/storm.yaml``, resized) in this process with the
minimal controller (``--impl reference`` for the other one), once as shipped
and once per variant in which some of the harness's per-attempt work is
replaced by nothing, interleaved with the SimPy model and the asyncio floor
of ``benchmarks/storm.py``. Each line is the best CPU time of ``--rounds``
runs and its ratio to SimPy's.

- ``free-trace``: the recorder keeps nothing (no event, and so nothing to judge);
- ``free-digests``: every request's argument digest is a constant;
- ``free-failures``: every failed attempt raises one ``httpx.HTTPStatusError``
  made once (its request and response too), instead of its own (storm's only
  failure is a 503);
- ``free-all``: the three at once.

These are upper bounds, not candidates: a variant's run is not a valid run.
Each must still take the same course as the shipped run (the same virtual
end time, checked), since none of them changes what a controller is told.
Whatever ``free-all`` leaves over the asyncio floor is the cost of the rest:
the controller, the workload's per-call steps, the service and the transport.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CONTROLLERS = {"minimal": "benchmarks.storm_controller:factory", "reference": "reference"}
FREES = ("trace", "digests", "failures")
VARIANTS = {
    "shipped": (),
    "free-trace": ("trace",),
    "free-digests": ("digests",),
    "free-failures": ("failures",),
    "free-all": FREES,
}


def _patches(frees: tuple[str, ...]) -> list[tuple[Any, str, Any]]:
    """The (owner, name, stand-in) replacements that make ``frees`` cost nothing."""
    import httpx  # noqa: PLC0415

    from retrychaos.world import families, service  # noqa: PLC0415
    from retrychaos.world.recorder import Recorder  # noqa: PLC0415

    patches: list[tuple[Any, str, Any]] = []
    if "trace" in frees:
        patches.append((Recorder, "record", lambda *_: None))
    if "digests" in frees:
        patches.append((service, "cached_args_digest", lambda *_: "0" * 16))
    if "failures" in frees:
        request = httpx.Request("GET", "http://search.tools.internal/search")
        response = httpx.Response(503, request=request)
        error = httpx.HTTPStatusError("503 Service Unavailable", request=request, response=response)

        def failed(*_: Any) -> Any:
            error.__traceback__ = error.__context__ = None  # the one error, raised afresh
            raise error

        patches.append((families.Family, "failed", failed))
    return patches


def one(impl: str, agents: int, variant: str) -> dict[str, Any]:
    """Simulate storm once with ``variant``'s parts free; its CPU time and virtual end."""
    from retrychaos.controllers.registry import resolve  # noqa: PLC0415
    from retrychaos.runner import simulate  # noqa: PLC0415
    from retrychaos.scenario import load_paths  # noqa: PLC0415

    scenario = load_paths([HERE / "storm.yaml"])[0][0]
    workload = dataclasses.replace(scenario.workload, agents=agents)
    scenario = dataclasses.replace(scenario, workload=workload)
    controller = resolve(CONTROLLERS[impl])
    patches = _patches(VARIANTS[variant])
    shipped = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for owner, name, stand_in in patches:
        setattr(owner, name, stand_in)
    try:
        gc.collect()
        cpu = time.process_time()
        simulation = simulate(scenario, controller, 1, trace="keep", watchdog_s=0)
        cpu_s = time.process_time() - cpu
    finally:
        for owner, name, original in shipped:
            setattr(owner, name, original)
    recorder = simulation.recorder
    if recorder is None or simulation.error is not None:
        sys.exit(f"{variant}: the run failed: {simulation.error}")
    end_ns = recorder._clock._ns if recorder._clock is not None else None  # noqa: SLF001
    simulation.discard()
    return {"cpu_s": cpu_s, "end_ns": end_ns}


def floors(agents: int) -> dict[str, float]:
    """CPU seconds of storm.py's SimPy model and asyncio floor, at the same size."""
    from retrychaos.scenario import load_paths  # noqa: PLC0415

    sys.path.insert(0, str(HERE))
    import storm  # noqa: PLC0415 (the sibling benchmark's models)

    workload = load_paths([HERE / "storm.yaml"])[0][0].workload
    args = (agents, workload.tasks_per_agent, 1, workload.start_spread_s)
    return {
        "simpy": storm.run_simpy(*args)["cpu_s"],
        "asyncio": storm.run_asyncio(*args)["cpu_s"],
    }


def main(argv: list[str] | None = None) -> int:
    """Interleave the models and the variants ``--rounds`` times; print the best of each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--impl", choices=sorted(CONTROLLERS), default="minimal")
    parser.add_argument("--out", type=Path, help="also write the figures here, as JSON")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE.parent))
    from retrychaos.runner import prepare  # noqa: PLC0415

    prepare()
    best: dict[str, float] = {}
    ends: dict[str, set[Any]] = {}
    for round_ in range(args.rounds):
        for name, cpu_s in floors(args.agents).items():
            best[name] = min(best.get(name, cpu_s), cpu_s)
        for variant in VARIANTS:
            run = one(args.impl, args.agents, variant)
            best[variant] = min(best.get(variant, run["cpu_s"]), run["cpu_s"])
            ends.setdefault(variant, set()).add(run["end_ns"])
        print(f"round {round_ + 1} of {args.rounds} done", file=sys.stderr, flush=True)  # noqa: T201
    courses = {frozenset(found) for found in ends.values()}
    simpy, shipped = best["simpy"], best["shipped"]
    print(f"storm, {args.agents} agents, {args.impl} controller, best CPU of {args.rounds}:")  # noqa: T201
    for name, cpu_s in best.items():
        saved = (
            "" if name in {"simpy", "asyncio", "shipped"} else f"  {1 - cpu_s / shipped:6.1%} saved"
        )
        print(f"  {name:14s} {cpu_s:7.3f} s  {cpu_s / simpy:5.2f}x simpy{saved}")  # noqa: T201
    if args.out is not None:
        figures = {"agents": args.agents, "impl": args.impl, "rounds": args.rounds}
        figures["best_cpu_s"] = {name: round(cpu_s, 4) for name, cpu_s in best.items()}
        figures["same_course"] = len(courses) == 1
        args.out.write_text(json.dumps(figures, indent=2) + "\n")
    if len(courses) != 1:
        print(f"the variants took different courses (virtual ends {ends}): not comparable")  # noqa: T201
        return 1
    print("every variant took the shipped run's course (the same virtual end)")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

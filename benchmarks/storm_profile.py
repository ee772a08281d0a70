"""Where storm's simulation spends its time, by module (docs/performance.md).

    python benchmarks/storm_profile.py --agents 1000 --impl minimal

Simulates storm (``benchmarks/storm.yaml``, resized) once in this process
under ``cProfile`` and prints each module's share of the profile's self time
(built-in functions counted apart, as one line), then the function calls per
attempt. ``cProfile`` inflates small functions called often, so read the
shares as the shape of the run, not as what each part would save; the
instruction counts in docs/performance-history.md are the finer measure.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import json
import pstats
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CONTROLLERS = {"minimal": "benchmarks.storm_controller:factory", "reference": "reference"}
BUILTINS = "built-in functions"


def area(filename: str) -> str:
    """The module a profiled function's file names: dotted under the repository, else its file."""
    if filename == "~":
        return BUILTINS
    path = Path(filename)
    try:
        inside = path.resolve().relative_to(ROOT)
    except ValueError:
        return path.name  # the standard library or a dependency: its file's name
    return ".".join(inside.with_suffix("").parts)


def shares(stats: dict[Any, Any]) -> tuple[dict[str, float], float, int]:
    """Each module's self time, the total self time and the number of calls, from pstats' table."""
    by_area: collections.Counter[str] = collections.Counter()
    total, calls = 0.0, 0
    for (filename, _line, _name), (_primitive, ncalls, tottime, _cum, _callers) in stats.items():
        by_area[area(filename)] += tottime
        total += tottime
        calls += ncalls
    return dict(by_area.most_common()), total, calls


def profile(impl: str, agents: int, seed: int) -> dict[str, Any]:
    """Simulate storm once under cProfile; the shares by module and the calls per attempt."""
    import dataclasses  # noqa: PLC0415

    from retrychaos.controllers.registry import resolve  # noqa: PLC0415
    from retrychaos.runner import prepare, simulate, trace_mode  # noqa: PLC0415
    from retrychaos.scenario import load_paths  # noqa: PLC0415

    scenario = load_paths([HERE / "storm.yaml"])[0][0]
    workload = dataclasses.replace(scenario.workload, agents=agents)
    scenario = dataclasses.replace(scenario, workload=workload)
    controller = resolve(CONTROLLERS[impl])
    prepare()
    profiler = cProfile.Profile()
    profiler.enable()
    simulation = simulate(scenario, controller, seed, trace=trace_mode(scenario))
    profiler.disable()
    try:
        if simulation.error is not None or simulation.recorder is None:
            sys.exit(f"the run failed: {simulation.error}")
        attempts = sum(event.kind == "request" for event in simulation.recorder.events)
    finally:
        simulation.discard()
    by_area, total, calls = shares(pstats.Stats(profiler).stats)  # type: ignore[attr-defined]
    return {
        "impl": impl,
        "agents": agents,
        "seed": seed,
        "attempts": attempts,
        "calls_per_attempt": round(calls / attempts, 1) if attempts else None,
        "self_s": round(total, 3),
        "shares": {name: round(t / total, 4) for name, t in by_area.items()} if total else {},
    }


def main(argv: list[str] | None = None) -> int:
    """Profile one run; print the modules over ``--min`` of the self time."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--impl", choices=sorted(CONTROLLERS), default="minimal")
    parser.add_argument("--min", type=float, default=0.01, help="smallest share printed")
    parser.add_argument("--out", type=Path, help="also write the figures here, as JSON")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    figures = profile(args.impl, args.agents, args.seed)
    print(  # noqa: T201
        f"storm, {args.agents} agents, {args.impl} controller, seed {args.seed}: "
        f"{figures['attempts']} attempts, {figures['calls_per_attempt']} calls an attempt, "
        f"{figures['self_s']} s of profiled self time"
    )
    rest = 0.0
    for name, share in figures["shares"].items():
        if share >= args.min:
            print(f"  {share:6.1%}  {name}")  # noqa: T201
        else:
            rest += share
    print(f"  {rest:6.1%}  the rest, each under {args.min:.1%}")  # noqa: T201
    if args.out is not None:
        args.out.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

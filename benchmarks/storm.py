"""The "storm" fleet benchmark (docs/performance.md, "The yardstick"), three ways side by side.

    python benchmarks/storm.py --agents 1000

runs, each in a process of its own, one after another:

- ``simpy``: a SimPy model of storm that follows the workload's pseudo-code and
  RNG order exactly (it must reproduce the reference totals bit for bit);
- ``minimal``: the harness running ``benchmarks/storm.yaml`` with
  ``benchmarks/storm_controller.py:factory``, a controller that does only what
  the workload's rules ask, through the public plug-in contract (the harness's
  own cost); its totals must land within 2% of the reference values (the
  harness draws from its own RNG streams);
- ``reference``: the harness with the reference controller (breaker and audit
  included; it sheds load in the outage, so its totals differ by design).

- ``asyncio``, for context: the same model as plain asyncio coroutines on the
  harness's virtual event loop, without the harness (no services, no trace,
  no contract): the floor of any fleet made of asyncio tasks. It must
  reproduce the reference totals exactly too.

(``--only`` picks some of them.) It prints attempts per second for each, the
ratios of the harness's wall times to SimPy's, the peak memory of each
process, then the goals of issue 18 next to the ratios this run measured
(:data:`GOALS`), and writes ``benchmarks/results/storm-<agents>.json``. Exit
status 1 if a check fails (a goal missed is reported, not a failure).

``wall_s`` is measured inside each process around building the fleet and
running it (interpreter start-up and imports excluded), as the workload
defines it; for the harness, judging the trace (invariants and metrics) is
timed apart (``judge_s``) and so is the whole process (``process_s``).
``--impl NAME`` runs one implementation in this process and prints its JSON
line (what the side-by-side run starts; handy under ``/usr/bin/time -v``).

SimPy is a benchmark-only dependency: ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import platform
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "storm.yaml"
RESULTS = HERE / "results"
IMPLS = ("simpy", "asyncio", "minimal", "reference")
EXTRA = ()
CONTROLLERS = {"minimal": "benchmarks.storm_controller:factory", "reference": "reference"}
TOLERANCE = 0.02

# Issue 18's goals and floors: (what, impl, measure, goal, floor); ratios to SimPy
# unless the measure is "judge" (judging time over simulating time, same impl).
GOALS = (
    ("minimal simulation", "minimal", "wall", 2.0, 4.5),
    ("reference simulation", "reference", "wall", 3.0, 4.0),
    ("reference whole process", "reference", "process", 3.0, None),
    ("minimal judging / simulating", "minimal", "judge", 0.2, 0.2),
    ("reference judging / simulating", "reference", "judge", 0.2, 0.2),
)

# Workload constants (docs/performance.md, "The yardstick": the storm workload).
LATENCY = 0.05
OUTAGE = (60.0, 120.0)
FAIL_P = 0.01
MAX_ATTEMPTS = 3
BASE, CAP, JITTER = 0.4, 4.0, 0.2
DEADLINE = 8.0
THINK = (0.5, 1.5)

# (agents, tasks, seed) -> (attempts, successes, giveups, virtual_end), spread 120 s.
REFERENCE = {
    (1000, 20, 1): (36042, 12221, 7779, 142.504582),
    (1000, 20, 2): (35127, 12704, 7296, 142.810538),
    (1000, 20, 3): (35087, 12701, 7299, 142.939899),
    (1000, 20, 4): (35365, 12578, 7422, 142.661978),
    (1000, 20, 5): (35400, 12556, 7444, 143.327996),
    (10000, 20, 1): (356829, 124201, 75799, 144.084159),
    (100000, 20, 1): (3555613, 1247830, 752170, 144.51483),
}


def run_simpy(agents: int, tasks: int, seed: int, spread: float) -> dict[str, Any]:
    """The SimPy model: one process per agent, one timeout per sleep."""
    try:
        import simpy  # noqa: PLC0415 (a benchmark-only dependency)
    except ImportError:
        sys.exit("simpy is not installed: pip install -e '.[bench]'")
    started, cpu = time.perf_counter(), time.process_time()
    env = simpy.Environment()
    totals = {"attempts": 0, "successes": 0, "giveups": 0, "virtual_end": 0.0}

    def agent(i: int) -> Any:
        rng = random.Random(seed * 1_000_000 + i)
        yield env.timeout(rng.uniform(0, spread))
        for k in range(tasks):
            if k > 0:
                yield env.timeout(rng.uniform(*THINK))
            task_start = env.now
            attempt = 1
            while True:
                t_s = env.now
                u = rng.random()
                yield env.timeout(LATENCY)
                totals["attempts"] += 1
                totals["virtual_end"] = env.now
                if not (OUTAGE[0] <= t_s < OUTAGE[1] or u < FAIL_P):
                    totals["successes"] += 1
                    break
                if attempt == MAX_ATTEMPTS:
                    totals["giveups"] += 1
                    break
                delay = min(CAP, BASE * 2 ** (attempt - 1))
                s = delay + rng.uniform(0, JITTER * delay)
                if env.now + s - task_start > DEADLINE:
                    totals["giveups"] += 1
                    break
                yield env.timeout(s)
                attempt += 1

    for i in range(agents):
        env.process(agent(i))
    env.run()
    return {**totals, "wall_s": time.perf_counter() - started, "cpu_s": time.process_time() - cpu}


def run_asyncio(agents: int, tasks: int, seed: int, spread: float) -> dict[str, Any]:
    """The model as plain asyncio tasks on the virtual loop (``asyncio.sleep``), no harness."""
    import asyncio  # noqa: PLC0415

    from retrychaos.world.clock import VirtualClock  # noqa: PLC0415
    from retrychaos.world.loop import VirtualEventLoop  # noqa: PLC0415

    started, cpu = time.perf_counter(), time.process_time()
    clock = VirtualClock()
    loop = VirtualEventLoop(clock)
    totals = {"attempts": 0, "successes": 0, "giveups": 0, "virtual_end": 0.0}

    async def agent(i: int) -> None:
        rng = random.Random(seed * 1_000_000 + i)
        await asyncio.sleep(rng.uniform(0, spread))
        for k in range(tasks):
            if k > 0:
                await asyncio.sleep(rng.uniform(*THINK))
            task_start = loop.time()
            attempt = 1
            while True:
                t_s = loop.time()
                u = rng.random()
                await asyncio.sleep(LATENCY)
                totals["attempts"] += 1
                totals["virtual_end"] = loop.time()
                if not (OUTAGE[0] <= t_s < OUTAGE[1] or u < FAIL_P):
                    totals["successes"] += 1
                    break
                if attempt == MAX_ATTEMPTS:
                    totals["giveups"] += 1
                    break
                delay = min(CAP, BASE * 2 ** (attempt - 1))
                s = delay + rng.uniform(0, JITTER * delay)
                if loop.time() + s - task_start > DEADLINE:
                    totals["giveups"] += 1
                    break
                await asyncio.sleep(s)
                attempt += 1

    async def fleet() -> None:
        await asyncio.gather(*(agent(i) for i in range(agents)))

    try:
        loop.run_until_complete(fleet())
    finally:
        loop.close()
    return {**totals, "wall_s": time.perf_counter() - started, "cpu_s": time.process_time() - cpu}


def run_harness(impl: str, agents: int, tasks: int, seed: int, spread: float) -> dict[str, Any]:
    """The harness on ``storm.yaml`` (resized), with the minimal or the reference controller."""
    from retrychaos.controllers.registry import resolve  # noqa: PLC0415
    from retrychaos.runner import judge, prepare, simulate, trace_mode  # noqa: PLC0415
    from retrychaos.scenario import load_paths  # noqa: PLC0415

    scenarios, errors = load_paths([SCENARIO])
    if errors:
        sys.exit("\n".join(map(str, errors)))
    scenario = scenarios[0]
    workload = dataclasses.replace(
        scenario.workload, agents=agents, tasks_per_agent=tasks, start_spread_s=spread
    )
    scenario = dataclasses.replace(scenario, workload=workload)
    controller = resolve(CONTROLLERS[impl])
    mode = trace_mode(scenario)
    prepare()  # imports every run shares: not part of the run
    started, cpu = time.perf_counter(), time.process_time()
    simulation = simulate(scenario, controller, seed, trace=mode)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    recorder = simulation.recorder
    if recorder is None or simulation.error is not None:
        sys.exit(f"the run failed: {simulation.error}")
    out: dict[str, Any] = {"wall_s": wall, "cpu_s": cpu, "trace": mode, "events": recorder.count}
    if mode == "keep":
        attempts = sum(event.kind == "request" for event in recorder.events)
        ends = [event for event in recorder.events if event.kind == "task_end"]
        tasks_done, successes = len(ends), sum(bool(event.data.get("ok")) for event in ends)
    else:  # parts: the recorder counted what it wrote to disk
        tally = recorder.tally
        attempts, successes, tasks_done = tally.attempts, tally.tasks_ok, tally.tasks
    started, cpu = time.perf_counter(), time.process_time()
    try:
        judgement = judge(simulation, scenario)
    finally:
        simulation.discard()
    out["judge_s"] = time.perf_counter() - started
    out["judge_cpu_s"] = time.process_time() - cpu
    violations = judgement.violations
    out["passed"] = judgement.error is None and not violations
    out["violated"] = sorted({v["invariant"] for v in violations})
    out.update(
        attempts=attempts,
        successes=successes,
        giveups=tasks_done - successes,
        virtual_end=recorder.last_at,
    )
    return out


def child(impl: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run one implementation in this process; its result as a JSON-ready dict."""
    if impl == "simpy":
        result = run_simpy(args.agents, args.tasks, args.seed, args.spread)
    elif impl == "asyncio":
        result = run_asyncio(args.agents, args.tasks, args.seed, args.spread)
    else:
        result = run_harness(impl, args.agents, args.tasks, args.seed, args.spread)
    result = {
        "impl": impl,
        "agents": args.agents,
        "tasks": args.tasks,
        "seed": args.seed,
        **result,
    }
    result["attempts_per_s"] = result["attempts"] / result["wall_s"]
    result["virtual_end"] = round(result["virtual_end"], 6)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def spawn(impl: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run ``--impl impl`` in a child process; its JSON line plus what the OS saw of it."""
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--impl",
        impl,
        "--agents",
        str(args.agents),
        "--tasks",
        str(args.tasks),
        "--seed",
        str(args.seed),
        "--spread",
        str(args.spread),
    ]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)  # noqa: S603
    assert process.stdout is not None  # noqa: S101
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - started
    if process.returncode != 0:
        sys.exit(f"{impl} failed (exit {process.returncode})")
    result: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    result["process_s"] = round(elapsed, 3)
    result["process_cpu_s"] = round(usage.ru_utime + usage.ru_stime, 3)
    result["peak_rss_mb"] = round(usage.ru_maxrss / 1024, 1)  # the child's, as the OS counted it
    return result


def check(results: dict[str, dict[str, Any]], args: argparse.Namespace) -> list[str]:
    """The checks: simpy reproduces the reference totals, minimal lands within 2% of them."""
    expected = REFERENCE.get((args.agents, args.tasks, args.seed)) if args.spread == 120 else None  # noqa: PLR2004
    notes: list[str] = []
    if expected is None:
        return ["no reference totals for these parameters: nothing checked"]
    names = ("attempts", "successes", "giveups")
    for exact in ("simpy", "asyncio"):
        row = results.get(exact)
        if row is None:
            continue
        got = (*(row[n] for n in names), row["virtual_end"])
        # asyncio's virtual clock counts whole nanoseconds: virtual_end to 1 us.
        ok = got[:3] == expected[:3] and abs(got[3] - expected[3]) < 2e-6  # noqa: PLR2004
        row["check"] = "exact" if ok else "MISMATCH"
        if not ok:
            notes.append(f"{exact}: expected {expected}, got {got}")
    minimal = results.get("minimal")
    if minimal is not None:
        worst = max(abs(minimal[n] - e) / e for n, e in zip(names, expected, strict=False))
        minimal["max_deviation"] = round(worst, 5)
        minimal["check"] = "within 2%" if worst <= TOLERANCE else "OUT OF TOLERANCE"
        if worst > TOLERANCE:
            notes.append(f"minimal: totals deviate {worst:.2%} from the reference (> 2%)")
    return notes


def table(results: dict[str, dict[str, Any]]) -> str:
    """The side-by-side table (``x simpy``: wall time; ``x cpu``: CPU time, steadier under load)."""
    base = results.get("simpy")
    header = (
        f"{'impl':<10} {'wall_s':>9} {'cpu_s':>8} {'attempts/s':>11} {'x simpy':>8} {'x cpu':>6} "
        f"{'judge_s':>8} {'process_s':>9} {'peak_MB':>8}  attempts/successes/giveups  check"
    )
    rows = [header]
    for impl, r in results.items():
        ratio = f"{r['wall_s'] / base['wall_s']:.2f}" if base is not None else "-"
        cpu = f"{r['cpu_s'] / base['cpu_s']:.2f}" if base is not None else "-"
        judge = f"{r['judge_s']:.2f}" if r.get("judge_s") is not None else "-"
        rows.append(
            f"{impl:<10} {r['wall_s']:>9.3f} {r['cpu_s']:>8.3f} {r['attempts_per_s']:>11,.0f} "
            f"{ratio:>8} {cpu:>6} {judge:>8} {r['process_s']:>9.2f} {r['peak_rss_mb']:>8.0f}  "
            f"{r['attempts']}/{r['successes']}/{r['giveups']}  {r.get('check', '')}"
        )
    return "\n".join(rows)


_MEASURES = {  # measure -> (numerator, denominator, same impl?) for wall and for CPU time
    "wall": (("wall_s", "wall_s", False), ("cpu_s", "cpu_s", False)),
    "process": (("process_s", "process_s", False), ("process_cpu_s", "process_cpu_s", False)),
    "judge": (("judge_s", "wall_s", True), ("judge_cpu_s", "cpu_s", True)),
}


def goals(results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each goal of :data:`GOALS` with the ratios this run measured, by wall and by CPU time."""
    base = results.get("simpy")
    rows: list[dict[str, Any]] = []
    for what, impl, measure, goal, floor in GOALS:
        row = results.get(impl)
        if row is None or (base is None and measure != "judge"):
            continue
        ratios = []
        for top, bottom, same in _MEASURES[measure]:
            under = row if same else base
            assert under is not None  # noqa: S101 (checked above)
            ratios.append(row[top] / under[bottom])
        wall, cpu = ratios
        rows.append(
            {
                "goal": what,
                "measured": round(wall, 3),
                "measured_cpu": round(cpu, 3),
                "target": goal,
                "floor": floor,
                "met": wall <= goal,
                "met_cpu": cpu <= goal,
                "floor_met": None if floor is None else wall <= floor,
                "floor_met_cpu": None if floor is None else cpu <= floor,
            }
        )
    return rows


def goal_lines(rows: list[dict[str, Any]], results: dict[str, dict[str, Any]]) -> str:
    """The goals next to the ratios measured (wall time, then CPU time), and the asyncio floor."""
    lines = ["goals (issue 18), this run, by wall time / by CPU time:"]
    for row in rows:
        judge = row["goal"].endswith("simulating")
        form = "{:.0%}" if judge else "{:.2f}x"
        shown = f"{form.format(row['measured'])} / {form.format(row['measured_cpu'])}"
        target = f"<= {row['target']:.0%}" if judge else f"<= {row['target']:g}x"
        floor = "" if row["floor"] is None or judge else f" (at least <= {row['floor']:g}x)"
        verdict = "met" if row["met_cpu"] else "missed"
        if not row["met_cpu"] and row["floor_met_cpu"] and not judge:
            verdict = "missed, floor met"
        lines.append(f"  {row['goal']:<31} {shown:>15}  goal {target}{floor}: {verdict} (CPU)")
    base, floor_row = results.get("simpy"), results.get("asyncio")
    if base is not None and floor_row is not None:
        wall = floor_row["wall_s"] / base["wall_s"]
        cpu = floor_row["cpu_s"] / base["cpu_s"]
        lines.append(f"  {'asyncio floor (no harness)':<31} {f'{wall:.2f}x / {cpu:.2f}x':>15}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse the command line; run one implementation or all side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=int(os.environ.get("AGENTS", "1000")))
    parser.add_argument("--tasks", type=int, default=int(os.environ.get("TASKS", "20")))
    parser.add_argument("--seed", type=int, default=int(os.environ.get("SEED", "1")))
    parser.add_argument("--spread", type=float, default=120.0)
    parser.add_argument("--impl", choices=IMPLS + EXTRA, help="run only this one, in this process")
    parser.add_argument(
        "--only", default=",".join(IMPLS), help="comma-separated implementations to run"
    )
    parser.add_argument("--out", type=Path, help="result file (default: results/storm-N.json)")
    args = parser.parse_args(argv)
    if args.impl is not None:
        sys.stdout.write(json.dumps(child(args.impl, args)) + "\n")
        return 0
    chosen = [name for name in args.only.split(",") if name]
    unknown = sorted(set(chosen) - set(IMPLS + EXTRA))
    if unknown:
        parser.error(f"unknown implementation(s): {', '.join(unknown)}")
    results: dict[str, dict[str, Any]] = {}
    for impl in chosen:
        results[impl] = spawn(impl, args)
        sys.stderr.write(f"{impl}: {results[impl]['wall_s']:.3f} s\n")
    notes = check(results, args)
    base = results.get("simpy")
    if base is not None:
        for impl, row in results.items():
            row["ratio_to_simpy"] = round(row["wall_s"] / base["wall_s"], 3)
            if impl != "simpy":
                row["process_ratio_to_simpy"] = round(row["process_s"] / base["process_s"], 3)
    sys.stdout.write(table(results) + "\n")
    measured = goals(results)
    sys.stdout.write(goal_lines(measured, results) + "\n")
    for note in notes:
        sys.stdout.write(f"note: {note}\n")
    document = {
        "workload": "storm v1 (shared/bench/WORKLOAD.md)",
        "command": "python benchmarks/storm.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "parameters": {
            "agents": args.agents,
            "tasks": args.tasks,
            "seed": args.seed,
            "spread": args.spread,
        },
        "reference": dict(
            zip(
                ("attempts", "successes", "giveups", "virtual_end"),
                REFERENCE.get((args.agents, args.tasks, args.seed), ()),
                strict=False,
            )
        ),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "results": results,
        "goals": measured,
        "notes": notes,
    }
    out = args.out or RESULTS / f"storm-{args.agents}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    sys.stdout.write(f"wrote {out}\n")
    failed = any(not note.startswith("no reference") for note in notes)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

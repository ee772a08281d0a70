"""What running each scenario test in a worker process costs the pytest plugin.

    python benchmarks/plugin_items.py --items 40

writes a throw-away project holding one shipped scenario and runs, each in a
process of its own, ``pytest --retrychaos-scenarios`` with seed 1 only and
with seeds 1..N, three times each; the difference, divided by N - 1, is what
one more scenario test costs the session (the session's fixed cost, the
first worker's start among it, cancels out). For comparison it times the
same cases run in this process by ``run_case`` (no pytest, no worker): the
gap between the two is the per-item overhead of the plugin and its worker.

Both wall time and CPU time (this process's children, workers included,
from ``getrusage``) are printed: on a shared machine the CPU figure is the
one that does not depend on what else runs. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIO = HERE.parent / "scenarios" / "transient" / "burst-503-clears.yaml"


def _session(project: Path, seeds: str) -> tuple[float, float]:
    """Wall and CPU seconds of one pytest session running the project's scenario tests."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    options = ["-q", "-p", "no:cacheprovider", "-p", "no:xdist", "--retrychaos-seeds", seeds]
    subprocess.run(  # noqa: S603 (this interpreter, fixed arguments)
        [sys.executable, "-m", "pytest", *options, "--retrychaos-scenarios", "burst.yaml"],
        cwd=project,
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _in_process(items: int) -> tuple[float, float]:
    """Wall and CPU seconds per case of ``run_case`` in this process, the same cases."""
    from retrychaos.controllers.registry import resolve  # noqa: PLC0415
    from retrychaos.runner import run_case  # noqa: PLC0415
    from retrychaos.scenario import load_scenario  # noqa: PLC0415

    scenario = load_scenario(SCENARIO)
    ref = resolve("reference")
    run_case(scenario, ref, 1, keep_events=False)  # imports and first-call costs apart
    started, cpu = time.perf_counter(), time.process_time()
    for seed in range(1, items + 1):
        run_case(scenario, ref, seed, keep_events=False)
    return (time.perf_counter() - started) / items, (time.process_time() - cpu) / items


def main() -> None:
    """Measure and print one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=40, help="Scenario tests in the long session.")
    parser.add_argument("--repeat", type=int, default=3, help="Sessions of each length.")
    args = parser.parse_args()
    project = Path(tempfile.mkdtemp(prefix="retrychaos-bench-"))
    try:
        shutil.copyfile(SCENARIO, project / "burst.yaml")
        short = [_session(project, "1") for _ in range(args.repeat)]
        long = [_session(project, f"1-{args.items}") for _ in range(args.repeat)]
    finally:
        shutil.rmtree(project)
    extra = args.items - 1
    wall_item = (min(w for w, _ in long) - min(w for w, _ in short)) / extra
    cpu_item = (min(c for _, c in long) - min(c for _, c in short)) / extra
    wall_case, cpu_case = _in_process(args.items)
    line = {
        "items": args.items,
        "session_1_item": {"wall_s": min(w for w, _ in short), "cpu_s": min(c for _, c in short)},
        "per_item": {"wall_s": round(wall_item, 4), "cpu_s": round(cpu_item, 4)},
        "run_case_in_process": {"wall_s": round(wall_case, 4), "cpu_s": round(cpu_case, 4)},
        "overhead_per_item": {
            "wall_s": round(wall_item - wall_case, 4),
            "cpu_s": round(cpu_item - cpu_case, 4),
        },
    }
    sys.stdout.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()

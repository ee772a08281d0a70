"""How a sweep scales with workers: the library x N seeds on 1 to 4 local workers, and Ray.

    python benchmarks/scaling.py                  # the library x 200 seeds (long)
    python benchmarks/scaling.py --seeds 3 --ray  # a quick run, with a local Ray instance

Each configuration runs the same cases (every scenario of the shipped
library x one controller x seeds 1..N) through
:func:`retrychaos.suite.execute`, in this process, one configuration after
another: ``--jobs 1`` to ``--jobs 4`` local worker processes, then, with
``--ray``, a Ray instance started here with as many CPUs as the largest
local run used. A run is timed from the first case handed out to the last
result back (``time.perf_counter``). The local executor never starts more
worker processes than the machine has CPUs (``processes`` in the table says
how many ran). Starting the Ray instance is timed apart (``start_s``), as a
cluster that is already up would not pay it. Speed-up is
against ``--jobs 1``; cases per second is cases over that time. ``cpu_s``
is the CPU time of this process and its local workers over the run (user
and system, ``getrusage``): on a machine shared with other work it is the
figure that does not depend on what else runs; a Ray instance's workers are
not this process's children, so a Ray row has none.

Every configuration must give the same verdicts, case by case (exit 1 if
not): scaling out changes where cases run, never what they find.

It prints a table and writes ``benchmarks/results/scaling-<seeds>.json``
with the machine's CPU count and load average at the start, since a machine
shared with other work measures less than its cores could give.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path
from typing import Any

from retrychaos.scenario import load_paths
from retrychaos.scenario.library import library_path
from retrychaos.suite import execute, plan

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def _cases(seeds: int, controller: str, keyword: str | None) -> list[Any]:
    scenarios, errors = load_paths([library_path()])
    if errors:
        sys.exit(f"the library does not load: {errors[0]}")
    if keyword is not None:
        scenarios = [s for s in scenarios if keyword in f"{s.suite}/{s.name}"]
    return plan(scenarios, [controller], list(range(1, seeds + 1)))


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _cpu_s() -> float:
    """CPU seconds of this process and of its children that have ended (local workers)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _measure(cases: list[Any], **how: Any) -> tuple[float, float, list[tuple[str, int, bool]]]:
    started, cpu = time.perf_counter(), _cpu_s()
    results = execute(cases, keep_failing=False, **how)
    took, cpu = time.perf_counter() - started, _cpu_s() - cpu
    return took, cpu, [(r.scenario, r.seed, r.passed) for r in results]


def main() -> int:
    """Run every configuration, print the table, write the JSON; 1 if verdicts differ."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seeds", type=int, default=200, help="seeds 1..N per scenario")
    parser.add_argument("--max-jobs", type=int, default=4, help="local workers, 1 to this")
    parser.add_argument("--controller", default="reference")
    parser.add_argument("-k", dest="keyword", help="only scenarios whose suite/name holds this")
    parser.add_argument("--ray", action="store_true", help="also a local Ray instance")
    args = parser.parse_args()
    load = [round(x, 2) for x in os.getloadavg()]
    cases = _cases(args.seeds, args.controller, args.keyword)
    _say(f"{len(cases)} cases: the library x {args.controller} x seeds 1-{args.seeds}")
    rows: list[dict[str, Any]] = []
    verdicts: dict[str, list[tuple[str, int, bool]]] = {}
    for jobs in range(1, args.max_jobs + 1):
        took, cpu, verdicts[f"local-{jobs}"] = _measure(cases, jobs=jobs)
        processes = min(jobs, len(cases), os.cpu_count() or 1)  # as the local executor caps it
        rows.append(
            {
                "executor": "local",
                "workers": jobs,
                "processes": processes,
                "wall_s": round(took, 2),
                "cpu_s": round(cpu, 2),
            }
        )
    if args.ray:
        from retrychaos.executors import connect_ray  # noqa: PLC0415 (the [ray] extra)

        started = time.perf_counter()
        cluster = connect_ray(None, cpus=max(r["processes"] for r in rows))
        start_s = time.perf_counter() - started
        cluster_cpus = cluster.cpus
        try:
            # The Ray workers are not this process's children: their CPU is not counted.
            took, _cpu, verdicts["ray"] = _measure(cases, executor=cluster)
        finally:
            cluster.close()
        rows.append(
            {
                "executor": "ray",
                "workers": cluster_cpus,
                "processes": cluster_cpus,
                "wall_s": round(took, 2),
                "start_s": round(start_s, 2),
            }
        )
    one = rows[0]["wall_s"]
    _say(
        f"{'executor':<8} {'workers':>7} {'procs':>5} {'wall_s':>8} {'cpu_s':>7} "
        f"{'cases/s':>8} {'speed-up':>8}"
    )
    for row in rows:
        row["cases_per_s"] = round(len(cases) / row["wall_s"], 2)
        row["speedup"] = round(one / row["wall_s"], 2)
        _say(
            f"{row['executor']:<8} {row['workers']:>7} {row['processes']:>5} {row['wall_s']:>8.2f} "
            f"{row.get('cpu_s', '-'):>7} "
            f"{row['cases_per_s']:>8.2f} {row['speedup']:>7.2f}x"
            + (f"  (+{row['start_s']:.1f} s to start Ray)" if "start_s" in row else "")
        )
    same = all(v == verdicts["local-1"] for v in verdicts.values())
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"scaling-{args.seeds}.json"
    document = {
        "cases": len(cases),
        "seeds": args.seeds,
        "controller": args.controller,
        "keyword": args.keyword,
        "cpus": os.cpu_count(),
        "load_average_at_start": load,
        "python": platform.python_version(),
        "rows": rows,
        "same_verdicts": same,
    }
    out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    _say(f"wrote {out}")
    if not same:
        sys.stderr.write("FAILED: the configurations gave different verdicts\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

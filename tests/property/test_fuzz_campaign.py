"""A campaign's bookkeeping, in this process: each search's line, one report, the exit code."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from retrychaos.campaign import SearchJob, campaign, run_search
from retrychaos.cli import app
from retrychaos.fuzz_db import namespace, open_database
from retrychaos.workers import death_message


class Scripted:
    """An executor whose searches end as scripted, in reverse order (as a cluster may)."""

    def __init__(self, ends: dict[int, Any]) -> None:
        self.ends = ends
        self.jobs: list[SearchJob] = []

    def run(self, jobs, work, *, on_phase=None, on_death):
        self.jobs = list(jobs)
        for index in sorted(self.ends, reverse=True):
            end = self.ends[index]
            yield index, on_death(index, end) if isinstance(end, str) else end


@pytest.fixture(scope="module")
def naive_found():
    """What naive's search of seed 0 finds in 10 examples (a real search, run once)."""
    job = SearchJob(controller="naive", seed=0, examples=10, watchdog_s=5.0)
    return run_search(job, lambda _what: None)


def test_each_search_gets_its_line_in_seed_order_and_a_dead_one_fails_the_campaign(tmp_path):
    """A search whose worker died says so and exits 1; nothing found writes no report."""
    nothing = run_search(
        SearchJob(controller="reference", seed=3, examples=1, watchdog_s=5.0), lambda _w: None
    )
    lines: list[str] = []
    executor = Scripted({0: death_message(7), 1: nothing})
    code = campaign(
        "reference",
        examples=1,
        seed=2,
        workers=2,
        report_dir=tmp_path / "out",
        echo=lines.append,
        executor=executor,
    )
    assert code == 1
    assert [job.seed for job in executor.jobs] == [2, 3]
    assert lines == [
        "fuzzing reference: 2 independent searches (seeds 2-3), up to 1 generated scenario each",
        f"seed 2: the search's worker died: {death_message(7)}",
        "seed 3: no violation in 1 generated scenario",
    ]
    assert not (tmp_path / "out").exists()


def test_nothing_found_anywhere_exits_0(tmp_path):
    """Every search clean: exit 0."""
    nothing = run_search(
        SearchJob(controller="reference", seed=0, examples=1, watchdog_s=5.0), lambda _w: None
    )
    lines: list[str] = []
    code = campaign(
        "reference",
        examples=1,
        seed=0,
        workers=1,
        report_dir=tmp_path,
        echo=lines.append,
        executor=Scripted({0: nothing}),
    )
    assert code == 0
    assert lines[-1] == "seed 0: no violation in 1 generated scenario"


def test_found_failures_are_written_as_one_report(tmp_path, naive_found):
    """The search that failed gets its shrunk file and its run in results.json."""
    lines: list[str] = []
    code = campaign(
        "naive",
        examples=10,
        seed=0,
        workers=1,
        report_dir=tmp_path,
        echo=lines.append,
        executor=Scripted({0: naive_found}),
    )
    assert code == 1
    assert lines[1] == "seed 0: failure found after 4 generated scenarios, shrunk"
    assert f"scenario: {tmp_path / 'fuzz-naive-seed0.yaml'}" in lines
    assert lines[-1] == f"results: {tmp_path / 'results.json'}"
    (entry,) = json.loads((tmp_path / "results.json").read_text())["runs"]
    assert entry["fuzz"]["examples"] == 4
    assert entry["fuzz"]["reproduced"] is True


def test_a_search_saves_its_failure_where_the_next_one_replays_it(tmp_path):
    """run_search with a database: seed 1 in one example finds what seed 0 saved."""
    folder = str(tmp_path / "db")
    first = SearchJob(controller="naive", seed=0, examples=10, watchdog_s=5.0, database=folder)
    assert run_search(first, lambda _w: None).examples == 4
    again = SearchJob(controller="naive", seed=1, examples=1, watchdog_s=5.0, database=folder)
    replayed = run_search(again, lambda _w: None)
    assert replayed.found
    assert replayed.examples == 1


def test_a_redis_database_keeps_examples_apart_per_search(redis_url):
    """Two opens of one Redis URL share a search's examples; another search sees none."""
    mine = open_database(redis_url, namespace("naive", None))
    mine.save(b"key", b"shrunk")
    assert list(open_database(redis_url, namespace("naive", None)).fetch(b"key")) == [b"shrunk"]
    assert list(open_database(redis_url, namespace("reference", None)).fetch(b"key")) == []
    mine.move(b"key", b"other", b"shrunk")
    assert list(mine.fetch(b"other")) == [b"shrunk"]
    mine.delete(b"other", b"shrunk")
    assert list(mine.fetch(b"other")) == []


def test_a_relative_db_folder_is_made_absolute_for_workers_elsewhere(tmp_path, monkeypatch):
    """Fuzz --db rel names, and hands on, the folder as an absolute path."""
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(
        app, ["fuzz", "-c", "reference", "--examples", "1", "--db", "rel", "--report", "out"]
    )
    assert done.exit_code == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        f"example database: {tmp_path.resolve() / 'rel'} (failures saved there replay first)"
    )

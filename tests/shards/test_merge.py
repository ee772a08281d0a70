"""``retrychaos merge``: shards joined into the report of a single-machine run, or refused."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from retrychaos.report.merge import MergeError, merge
from retrychaos.scenario import load_paths
from retrychaos.suite import case_id, plan

if TYPE_CHECKING:
    from .conftest import Sharded

SHARDS = ("s1-3", "s2-3", "s3-3")
_WALL = re.compile(r'"wall_s": [0-9.e-]+')
_TIME = re.compile(r'(<testsuites? [^>]*)time="[0-9.]+"')


def _without_wall_times(name: str, data: bytes) -> bytes:
    """``data`` with the documented wall-time fields zeroed (nothing else touched)."""
    text = data.decode("utf-8")
    if name == "results.json":
        text = _WALL.sub('"wall_s": 0', text)
    if name == "junit.xml":
        text = _TIME.sub(r'\1time="0"', text)
    return text.encode("utf-8")


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _edited(sharded: Sharded, name: str, copy: str, **changes: object) -> str:
    """A copy of report folder ``name`` whose results.json has ``changes`` at the top level."""
    target = sharded.folder(copy)
    shutil.copytree(sharded.folder(name), target)
    document = json.loads((target / "results.json").read_text())
    document.update(changes)
    (target / "results.json").write_text(json.dumps(document))
    return copy


def test_the_merged_shards_are_the_whole_run_outside_wall_times(
    sharded: Sharded, retrychaos
) -> None:
    """Every file of the merged folder equals the whole run's, byte for byte, wall times aside."""
    result = retrychaos("merge", "s3-3", "s1-3", "s2-3", "--report", "merged", cwd=sharded.project)
    assert result.returncode == 1, result.stderr  # naive's runs fail, as in the whole run
    lines = result.stdout.splitlines()
    assert lines[0] == "merged 3 report folders: 8 cases"
    assert "naive: 0 of 4 runs passed; violated: backoff_bounded_and_jittered (4)" in lines
    assert "reference: 4 of 4 runs passed" in lines
    assert lines[-1] == "report: merged/index.html (also summary.md, results.json, junit.xml)"
    whole, merged = _files(sharded.folder("whole")), _files(sharded.folder("merged"))
    assert sorted(merged) == sorted(whole)
    assert any(name.startswith("traces/") for name in merged)
    for name, data in whole.items():
        assert _without_wall_times(name, merged[name]) == _without_wall_times(name, data), name


def test_each_shard_records_its_part_and_the_whole_plan(sharded: Sharded) -> None:
    """results.json gives each run its case_id() and index; a shard says its part of the plan."""
    whole = json.loads((sharded.folder("whole") / "results.json").read_text())
    assert whole["shard"] is None
    assert whole["planned"] == len(whole["runs"]) == 8
    assert [r["index"] for r in whole["runs"]] == list(range(8))
    scenarios, errors = load_paths([sharded.folder("scenarios")])
    assert errors == []
    cases = plan(scenarios, ["reference", "naive"], [1, 2])
    assert [r["case"] for r in whole["runs"]] == [case_id(c) for c in cases]
    seen = []
    for k, name in enumerate(SHARDS, start=1):
        document = json.loads((sharded.folder(name) / "results.json").read_text())
        assert document["shard"] == {"index": k, "total": 3, "cases": len(document["runs"])}
        assert (document["planned"], document["plan"]) == (8, whole["plan"])
        seen += [(r["index"], r["case"]) for r in document["runs"]]
    assert sorted(seen) == [(r["index"], r["case"]) for r in whole["runs"]]


@pytest.fixture
def inside(sharded: Sharded, monkeypatch: pytest.MonkeyPatch) -> Sharded:
    """The sharded project as the working folder: folders are named as a user types them."""
    monkeypatch.chdir(sharded.project)
    return sharded


def _refused(*folders: str, out: str = "out") -> str:
    """What merge() says when it refuses ``folders``; nothing is written."""
    with pytest.raises(MergeError) as caught:
        merge([Path(f) for f in folders], Path(out))
    assert not Path(out).exists() or out == "whole"
    return str(caught.value)


def test_a_refused_merge_exits_2_and_names_the_missing_shard(sharded: Sharded, retrychaos) -> None:
    """Shards 1 and 3 of 3 are not a run: exit 2, shard 2/3 named as missing, nothing written."""
    result = retrychaos("merge", "s1-3", "s3-3", "--report", "out", cwd=sharded.project)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "error: shard 2/3 missing (given: 1/3, 3/3); expected every shard's folder: run the "
        "missing shard with the same command and --shard 2/3\n"
    )
    assert not sharded.folder("out").exists()


def test_a_shard_given_twice_is_refused(inside: Sharded) -> None:
    """Two folders of one shard overlap: both are named."""
    again = _edited(inside, "s2-3", "again")
    assert _refused("s1-3", "s2-3", again, "s3-3") == (
        "overlapping shards: s2-3 and again are both shard 2/3; expected each shard once"
    )


def test_a_case_in_two_shards_is_refused(inside: Sharded) -> None:
    """A shard relabelled as another still holds its cases: the duplicate case id is named."""
    first = json.loads(Path("s2-3/results.json").read_text())["runs"][0]
    relabelled = _edited(inside, "s2-3", "relabelled", shard={"index": 3, "total": 3, "cases": 3})
    assert _refused("s1-3", "s2-3", relabelled) == (
        f"overlapping shards: case {first['case']} ({first['controller']} · "
        f"{first['scenario']} · seed {first['seed']}) is in both s2-3 and relabelled; "
        "expected each case in one shard"
    )


def test_shards_of_different_totals_are_refused(inside: Sharded) -> None:
    """A shard of 2 among shards of 3: both totals are named."""
    halves = _edited(inside, "s1-3", "halves", shard={"index": 1, "total": 2, "cases": 4})
    assert _refused(halves, "s2-3", "s3-3") == (
        "different shard totals: halves is shard 1/2, s2-3 is shard 2/3; "
        "expected the shards of one run (one N in --shard K/N)"
    )


def test_shards_of_different_plans_are_refused(inside: Sharded) -> None:
    """A shard of another plan (other seeds, say) is not of this run: both plans are named."""
    plan = json.loads(Path("s1-3/results.json").read_text())["plan"]
    other = _edited(inside, "s2-3", "other", plan="0123456789abcdef")
    assert _refused("s1-3", other, "s3-3") == (
        f"different plans: s1-3 and other planned different cases (plan {plan} "
        "and 0123456789abcdef: other scenarios, controllers, seeds, options or their order); "
        "expected shards of one command, differing only in --shard"
    )


def test_folders_of_different_versions_are_refused(inside: Sharded) -> None:
    """A shard written by another retrychaos version: both versions are named."""
    version = json.loads(Path("s1-3/results.json").read_text())["retrychaos"]
    older = _edited(inside, "s2-3", "older", retrychaos="0.0.1")
    assert _refused("s1-3", older, "s3-3") == (
        f"different retrychaos versions: s1-3 was written by {version}, older by "
        "0.0.1; expected every shard run with one version"
    )


def test_shards_of_another_version_than_the_merging_one_are_refused(inside: Sharded) -> None:
    """Every shard of another version: merging would render them with this one, so it refuses."""
    version = json.loads(Path("s1-3/results.json").read_text())["retrychaos"]
    old = [_edited(inside, n, f"old-{n}", retrychaos="0.0.1") for n in SHARDS]
    assert _refused(*old) == (
        f"old-s1-3 was written by retrychaos 0.0.1, but this is retrychaos {version}; "
        "expected to merge with the version that ran the shards (the reports are rendered again)"
    )


def test_an_interrupted_shard_is_refused(inside: Sharded) -> None:
    """A shard marked "complete": false is named as interrupted."""
    cut = _edited(inside, "s3-3", "cut", complete=False)
    count = json.loads(Path("s3-3/results.json").read_text())["shard"]["cases"]
    assert _refused("s1-3", "s2-3", cut) == (
        f"cut is an incomplete run (shard 3/3, interrupted: {count} of {count} cases, "
        '"complete": false); expected a finished run: run that shard again'
    )


def test_a_folder_that_is_not_a_run_report_is_refused(inside: Sharded) -> None:
    """A results.json without a plan (not written by `run`) is named."""
    bare = _edited(inside, "s1-3", "bare", plan=None)
    assert _refused(bare, "s2-3", "s3-3") == (
        "bare/results.json: no 'plan' field; expected the report folder of "
        "`retrychaos run` (with --shard K/N, or a whole run)"
    )


def test_a_non_empty_out_folder_is_never_overwritten(inside: Sharded) -> None:
    """OUT holding anything is refused and left as it was."""
    before = _files(Path("whole"))
    assert _refused(*SHARDS, out="whole") == (
        "--report whole: the folder is not empty; expected a new or empty folder "
        "(a merge never overwrites a report)"
    )
    assert _files(Path("whole")) == before


def test_the_api_merges_into_an_empty_folder_and_refuses_a_file(sharded: Sharded) -> None:
    """merge(folders, out) writes into an existing empty folder; OUT as a file is refused."""
    empty = sharded.folder("empty")
    empty.mkdir()
    document = merge([sharded.folder(n) for n in SHARDS], empty)
    assert (document["shard"], document["complete"], len(document["runs"])) == (None, True, 8)
    file = sharded.folder("a-file")
    file.write_text("x")
    with pytest.raises(MergeError) as caught:
        merge([sharded.folder(n) for n in SHARDS], file)
    assert str(caught.value) == (
        f"--report {file}: a file, not a folder; expected a new or empty folder"
    )

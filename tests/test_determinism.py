"""Same scenario, controller and seed: byte-identical traces, across processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(report: Path, hash_seed: str, *args: str) -> None:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed, NO_COLOR="1")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "retrychaos.cli",
            "run",
            *(args or (str(ROOT / "scenarios"),)),
            "--seed",
            "1",
            "--keep-traces",
            "--report",
            str(report),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_whole_library_replays_byte_identically_in_fresh_processes(tmp_path: Path) -> None:
    """Two processes with different hash seeds write the same trace for every case."""
    first, second = tmp_path / "first", tmp_path / "second"
    _run(first, "1")
    _run(second, "2")
    traces = sorted(p.name for p in (first / "traces").glob("*.jsonl"))
    assert len(traces) >= 20, "the library should have written one trace per scenario"
    assert traces == sorted(p.name for p in (second / "traces").glob("*.jsonl"))
    differing = [
        name
        for name in traces
        if (first / "traces" / name).read_bytes() != (second / "traces" / name).read_bytes()
    ]
    assert differing == []


def test_error_texts_with_object_addresses_replay_identically(tmp_path: Path) -> None:
    """A RetryError from tenacity names a Future by its address: the trace masks it."""
    scenarios = [
        str(ROOT / "scenarios" / "transient" / "brownout-20pct.yaml"),
        str(ROOT / "scenarios" / "permanent" / "business-rejection-409.yaml"),
    ]
    first, second = tmp_path / "first", tmp_path / "second"
    for report, hash_seed in ((first, "1"), (second, "2")):
        _run(report, hash_seed, *scenarios, "--controller", "tenacity-default")
    names = sorted(p.name for p in (first / "traces").glob("*.jsonl"))
    assert len(names) == 2
    texts = [(first / "traces" / name).read_text() for name in names]
    assert any("Future at 0x..." in text for text in texts)
    for name, text in zip(names, texts, strict=True):
        assert (second / "traces" / name).read_text() == text

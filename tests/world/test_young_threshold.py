"""A kept trace raises the collector's young threshold as it grows, inside a quiet block only."""

from __future__ import annotations

import gc

import pytest

from retrychaos.world import runtime, young
from retrychaos.world.clock import VirtualClock
from retrychaos.world.recorder import Recorder

BASE = runtime._GC_THRESHOLDS  # the thresholds a quiet block sets


def _record(recorder: Recorder, events: int) -> None:
    for i in range(events):
        recorder.record("request", i % 7, None, None, None, None, {"n": i})


def _young_threshold() -> int:
    return gc.get_threshold()[0]


def test_a_kept_trace_raises_the_young_threshold_by_one_per_two_events() -> None:
    recorder = Recorder(VirtualClock().now_ns)
    with runtime.quiet_collector():
        _record(recorder, 3 * young.STEP)
        assert gc.get_threshold() == (BASE[0] + 2 * young.STEP // 2, BASE[1], BASE[2])
        _record(recorder, 1)
        # raised at every STEP events, not at each one
        assert _young_threshold() == BASE[0] + 3 * young.STEP // 2
    assert recorder.count == 3 * young.STEP + 1


def test_the_threshold_stops_at_the_ceiling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(young, "CEILING", BASE[0] + 1000)
    with runtime.quiet_collector():
        _record(Recorder(VirtualClock().now_ns), 2 * young.STEP + 1)
        assert _young_threshold() == BASE[0] + 1000


@pytest.mark.parametrize("keep", [True, False])
def test_thresholds_come_back_after_the_block(*, keep: bool) -> None:
    before = gc.get_threshold()
    with runtime.quiet_collector():
        _record(Recorder(VirtualClock().now_ns, keep=keep), 2 * young.STEP + 1)
    assert gc.get_threshold() == before
    # and a trace kept outside any quiet block leaves the collector as it is
    _record(Recorder(VirtualClock().now_ns), 2 * young.STEP + 1)
    assert gc.get_threshold() == before


def test_a_counted_or_streamed_only_trace_leaves_the_threshold() -> None:
    with runtime.quiet_collector():
        _record(Recorder(VirtualClock().now_ns, keep=False), 2 * young.STEP + 1)
        assert gc.get_threshold() == BASE


def test_a_kept_and_streamed_trace_raises_it_too() -> None:
    class Sink:
        def __init__(self) -> None:
            self.lines = 0

        def write(self, text: str) -> int:
            self.lines += text == "\n"
            return len(text)

    sink = Sink()
    recorder = Recorder(VirtualClock().now_ns, sink=sink)  # type: ignore[arg-type]
    with runtime.quiet_collector():
        _record(recorder, young.STEP + 1)
        assert _young_threshold() == BASE[0] + young.STEP // 2
    assert sink.lines == young.STEP + 1


def test_judging_inside_a_run_keeps_the_run_threshold() -> None:
    # A quiet block inside another (judging a trace while a run goes on)
    # hands the outer block's threshold back when it ends.
    recorder = Recorder(VirtualClock().now_ns)
    with runtime.quiet_collector():
        with runtime.quiet_collector(off=True):
            pass
        _record(recorder, young.STEP + 1)
        assert _young_threshold() == BASE[0] + young.STEP // 2

"""The on-disk parts of a large run's trace: what goes in comes back, in order."""

from __future__ import annotations

import pytest

from retrychaos.world.shards import BATCH, BUFFERED, MIN_BATCH, ShardWriter
from retrychaos.world.trace import TraceEvent


def row(seq, agent, data=None):
    return (seq, seq / 10, "request", agent, f"a{agent}-t0", None, None, "search", data or {})


def test_each_part_gets_its_agents_and_every_event_without_one_in_seq_order(tmp_path):
    """Agents 0 and 2 go to part 0 of 2, agent 1 to part 1; agent-less events to both."""
    writer = ShardWriter(2, tmp_path)
    rows = [row(0, None), row(1, 0), row(2, 1), row(3, 2), row(4, None), row(5, 1)]
    for r in rows:
        writer.add(*r)
    zero, one = writer.events(0), writer.events(1)
    assert [e.seq for e in zero] == [0, 1, 3, 4]
    assert [e.seq for e in one] == [0, 2, 4, 5]
    assert zero[1] == TraceEvent(
        seq=1, at=0.1, kind="request", agent=0, task="a0-t0", tool="search", data={}
    )
    assert [e.seq for e in writer.shared] == [0, 4]


def test_many_batches_come_back_whole(tmp_path):
    """Past one batch per part, every event still comes back once, in order."""
    writer = ShardWriter(3, tmp_path)
    total = 3 * BATCH + 17
    for seq in range(total):
        writer.add(*row(seq, seq % 7, {"n": seq, "nested": {"list": [seq, None, True]}}))
    seen = [e.seq for k in range(3) for e in writer.events(k)]
    assert sorted(seen) == list(range(total))
    assert all(e.data["n"] == e.seq for e in writer.events(2))


def test_many_parts_buffer_a_bounded_number_of_events_in_all(tmp_path):
    """With many parts each batch is smaller; what goes in still comes back, in order."""
    for name in ("few", "many", "most"):
        (tmp_path / name).mkdir()
    few, most = ShardWriter(3, tmp_path / "few"), ShardWriter(512, tmp_path / "most")
    assert (few.batch, most.batch) == (BATCH, MIN_BATCH)
    few.remove()
    most.remove()
    writer = ShardWriter(80, tmp_path / "many")
    assert MIN_BATCH <= writer.batch < BATCH
    assert writer.batch * 80 <= BUFFERED
    total = 80 * writer.batch + 5
    for seq in range(total):  # every part's buffer fills and is written once
        writer.add(*row(seq, seq % 80, {"n": seq}))
        assert sum(map(len, writer._buffers)) <= BUFFERED
    seen = [e.seq for k in range(80) for e in writer.events(k)]
    assert sorted(seen) == list(range(total))
    assert [e.seq for e in writer.events(0)] == list(range(0, total, 80))
    writer.remove()


def test_data_marshal_refuses_is_stored_as_its_json_form(tmp_path):
    """An odd value in an event's data comes back as a trace file would give it back."""

    class Odd:
        def __str__(self):
            return "odd!"

    writer = ShardWriter(1, tmp_path)
    writer.add(*row(0, 0, {"what": Odd(), "fine": (1, 2)}))
    writer.add(*row(1, 0, {"fine": (1, 2)}))
    first, second = writer.events(0)
    assert first.data == {"what": "odd!", "fine": [1, 2]}
    assert second.data == {"fine": (1, 2)}


def test_remove_deletes_the_parts_and_a_directory_of_its_own(tmp_path):
    """A temporary directory made by the writer goes; a given one stays, emptied."""
    writer = ShardWriter(2)
    writer.add(*row(0, 1))
    own = writer.directory
    assert own.is_dir()
    writer.remove()
    assert not own.exists()
    given = ShardWriter(2, tmp_path)
    given.add(*row(0, 1))
    given.finish()
    given.remove()
    assert tmp_path.is_dir()
    assert list(tmp_path.iterdir()) == []


def test_at_least_one_part_is_needed(tmp_path):
    with pytest.raises(ValueError, match="Expected at least 1 shard but got 0"):
        ShardWriter(0, tmp_path)

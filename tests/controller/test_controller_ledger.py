import asyncio
import datetime as dt
import hashlib
import random
import sqlite3

import httpx
import pytest
from controller_fakes import ScriptedTool, argument_error, ctx, transport_error

from retrychaos.controller import (
    IdempotencyConflict,
    IdempotencyLedger,
    LedgerError,
    MemoryLedgerStore,
    ReferenceController,
    SqliteLedgerStore,
    fingerprint,
    key_digest,
    operation_key,
)
from retrychaos.controller.ledger import LedgerStatus

WRITE = {"side_effect": True, "idempotency_key": "op-1", "idempotency_supported": True}


def test_operation_key_is_stable_and_distinct():
    """The same task, operation and args give the same key; anything else a different one."""
    key = operation_key("task-1", "create_ticket", {"title": "Printer", "prio": 2})
    assert key == operation_key("task-1", "create_ticket", {"prio": 2, "title": "Printer"})
    assert key.startswith("rc1-")
    assert key != operation_key("task-2", "create_ticket", {"title": "Printer", "prio": 2})
    assert key != operation_key("task-1", "close_ticket", {"title": "Printer", "prio": 2})
    assert key != operation_key("task-1", "create_ticket", {"title": "Printer", "prio": 3})


def test_fingerprint_is_sha256_of_canonical_json():
    """The fingerprint is sha256 over sorted, compact JSON of the args."""
    expected = hashlib.sha256(b'{"a":1,"b":[1,"\xc3\xa9"]}').hexdigest()
    assert fingerprint({"b": [1, "é"], "a": 1}) == expected


def test_fingerprint_accepts_non_json_values():
    """Dates, sets and bytes are fingerprinted deterministically instead of failing."""
    args = {"when": dt.date(2026, 1, 2), "tags": {"b", "a"}, "blob": b"\x01"}
    assert fingerprint(args) == fingerprint(dict(args))


def test_key_digest_is_a_short_sha256_prefix():
    """Audit records carry 16 hex characters of sha256(key)."""
    assert key_digest("op-1") == hashlib.sha256(b"op-1").hexdigest()[:16]


def test_ledger_replays_done_and_refuses_a_different_fingerprint():
    """DONE with the same fingerprint is replayed; another fingerprint raises a conflict."""
    ledger = IdempotencyLedger()
    assert ledger.begin("op-1", "f" * 64, at=1.0) is None
    ledger.complete("op-1", "f" * 64, {"id": 7}, at=2.0)
    entry = ledger.begin("op-1", "f" * 64, at=3.0)
    assert entry is not None
    assert (entry.status, entry.result()) == (LedgerStatus.DONE, {"id": 7})
    with pytest.raises(IdempotencyConflict) as caught:
        ledger.begin("op-1", "e" * 64, at=4.0)
    assert str(caught.value) == (
        f"idempotency key {key_digest('op-1')} was first used for a request with fingerprint "
        "ffffffffffffffff, now for eeeeeeeeeeeeeeee; derive a new key for a new operation "
        "(operation_key(task_id, operation, args))"
    )


def test_abandon_frees_only_a_pending_claim_with_the_same_fingerprint():
    """A definite rejection frees the key; DONE entries and other claims stay."""
    ledger = IdempotencyLedger()
    ledger.begin("op-1", "a", at=0.0)
    ledger.abandon("op-1", "b")
    assert ledger.store.get(hashlib.sha256(b"op-1").hexdigest()) is not None
    ledger.abandon("op-1", "a")
    assert ledger.begin("op-1", "b", at=0.0) is None


def test_results_must_be_json():
    """A result the ledger cannot store raises LedgerError naming the key's digest."""
    ledger = IdempotencyLedger(MemoryLedgerStore())
    with pytest.raises(LedgerError) as caught:
        ledger.complete("op-1", "a", object(), at=0.0)
    assert str(caught.value).startswith(
        f"the result of the operation with key {key_digest('op-1')} cannot be recorded: "
    )


def test_sqlite_ledger_survives_reopening(tmp_path):
    """A result recorded in the SQLite file is there after closing and reopening it."""
    path = tmp_path / "nested" / "ledger.sqlite3"
    with SqliteLedgerStore(path) as store:
        ledger = IdempotencyLedger(store)
        ledger.begin("op-1", "f", at=1.0)
        ledger.complete("op-1", "f", {"ticket": 42}, at=2.0)
    with SqliteLedgerStore(path) as store:
        entry = IdempotencyLedger(store).begin("op-1", "f", at=3.0)
    assert entry is not None
    assert entry.result() == {"ticket": 42}
    assert entry.recorded_at == 2.0


def test_sqlite_ledger_never_stores_the_raw_key(tmp_path):
    """The file holds sha256 digests of keys, not the keys."""
    path = tmp_path / "ledger.sqlite3"
    with SqliteLedgerStore(path) as store:
        IdempotencyLedger(store).begin("secret-op-key", "f", at=0.0)
    assert b"secret-op-key" not in path.read_bytes()
    with sqlite3.connect(path) as connection:
        rows = connection.execute("SELECT key_hash FROM ledger").fetchall()
    connection.close()
    assert rows == [(hashlib.sha256(b"secret-op-key").hexdigest(),)]


def test_sqlite_default_path_is_relative_to_the_working_directory(tmp_path, monkeypatch):
    """Without a path the store lives in .retrychaos/ under the current directory."""
    monkeypatch.chdir(tmp_path)
    with SqliteLedgerStore() as store:
        store.delete("nothing")
    assert (tmp_path / ".retrychaos" / "idempotency-ledger.sqlite3").exists()


def test_controller_replays_after_a_restart(tmp_path, clock):
    """A second process with the same ledger file returns the result without calling the tool."""
    path = tmp_path / "ledger.sqlite3"
    first = ScriptedTool(result={"ticket": 1})
    with SqliteLedgerStore(path) as store:
        ctl = ReferenceController(clock=clock, ledger=IdempotencyLedger(store))
        assert asyncio.run(ctl.call(first, {"title": "t"}, ctx(**WRITE))) == {"ticket": 1}
    second = ScriptedTool(result={"ticket": 2})
    with SqliteLedgerStore(path) as store:
        ctl = ReferenceController(clock=clock, ledger=IdempotencyLedger(store))
        replay = asyncio.run(ctl.call(second, {"title": "t"}, ctx(**WRITE, call_id="c2")))
    assert replay == {"ticket": 1}
    assert second.calls == []
    assert ctl.metrics.snapshot().replays == 1


def test_controller_refuses_a_reused_key_with_other_args(clock):
    """Same key, different args: a stop decision flagged as a conflict, and no call."""
    ctl = ReferenceController(clock=clock)
    asyncio.run(ctl.call(ScriptedTool(), {"title": "a"}, ctx(**WRITE)))
    tool = ScriptedTool()
    result = asyncio.run(ctl.call(tool, {"title": "b"}, ctx(**WRITE, call_id="c2")))
    assert tool.calls == []
    assert result["decision"] == "stop"
    assert result["conflict"] is True
    assert result["error"].startswith(f"idempotency key {key_digest('op-1')} was first used")
    assert ctl.metrics.snapshot().duplicate_side_effect_events == 1


def test_model_fix_frees_the_key_for_corrected_args(clock):
    """After a 422 nothing was committed: the corrected request may reuse the key."""
    ctl = ReferenceController(clock=clock)
    rejected = asyncio.run(
        ctl.call(ScriptedTool(script=[argument_error()]), {"date": "bad"}, ctx(**WRITE))
    )
    assert rejected["decision"] == "model_fix"
    fixed = asyncio.run(
        ctl.call(ScriptedTool(result="created"), {"date": "2026-01-01"}, ctx(**WRITE))
    )
    assert fixed == "created"


def test_an_unknown_outcome_keeps_guarding_the_key(clock):
    """After timeouts that may have committed, other args under the same key conflict."""
    ctl = ReferenceController(clock=clock)
    tool = ScriptedTool(script=[transport_error(httpx.ReadTimeout)] * 3)
    assert asyncio.run(ctl.call(tool, {"n": 1}, ctx(**WRITE)))["decision"] == "budget_exhausted"
    other = asyncio.run(ctl.call(ScriptedTool(), {"n": 2}, ctx(**WRITE, task_id="t2")))
    assert other["conflict"] is True
    same = asyncio.run(ctl.call(ScriptedTool(result="done"), {"n": 1}, ctx(**WRITE, task_id="t3")))
    assert same == "done"


def test_keyless_calls_bypass_the_ledger(clock):
    """Reads and keyless side effects are never replayed from the ledger."""
    ctl = ReferenceController(clock=clock, rng=random.Random(0))
    tool = ScriptedTool()
    for task in ("a", "b"):
        asyncio.run(ctl.call(tool, {}, ctx(task_id=task, side_effect=True)))
    assert len(tool.calls) == 2

import asyncio
import json
import logging
import random

import httpx
import pytest
from controller_fakes import ScriptedTool, ctx, status_error, transport_error

from retrychaos.controller import (
    AUDIT_FIELDS,
    CallableAuditSink,
    JsonLinesAuditSink,
    LoggingAuditSink,
    MemoryAuditSink,
    ReferenceController,
    key_digest,
    redact,
)
from retrychaos.controller.audit import audit_record

KEY = "op-7f3a9c-create-ticket-for-alice"
SECRETS = [
    "sk-live-4f9a8b7c6d5e4f3a2b1c",
    "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl",
    "hunter2-password-value",
    "ghp_0123456789abcdefghijABCDEFGHIJ",
]
ARGS = {
    "title": "Printer on fire",
    "api_key": SECRETS[0],
    "headers": {"Authorization": SECRETS[1]},
    "password": SECRETS[2],
    "note": f"use {SECRETS[3]} please",
}


def audited_run(clock):
    """Run a keyed side effect failing twice (with secrets in args and errors); return records."""
    sink = MemoryAuditSink()
    ctl = ReferenceController(clock=clock, rng=random.Random(0), audit_sinks=[sink])
    tool = ScriptedTool(
        script=[
            transport_error(httpx.ReadTimeout, f"timed out sending {SECRETS[0]}"),
            status_error(503, json={"error": {"message": f"token={SECRETS[2]} rejected"}}),
        ],
        result={"ticket": 1},
    )
    context = ctx(
        tool="create_ticket",
        call_id="call-9",
        side_effect=True,
        idempotency_key=KEY,
        idempotency_supported=True,
    )
    asyncio.run(ctl.call(tool, ARGS, context))
    return sink.records


def test_one_record_per_attempt_and_one_per_decision(clock):
    """Three attempts and one final decision give four records, in order."""
    records = audited_run(clock)
    assert [(r["event"], r["attempt"], r["decision"]) for r in records] == [
        ("attempt", 1, "retry"),
        ("attempt", 2, "retry"),
        ("attempt", 3, "ok"),
        ("decision", 3, "ok"),
    ]


def test_records_carry_every_field(clock):
    """Every record has all the audit fields with the expected values."""
    records = audited_run(clock)
    for record in records:
        assert tuple(record)[: len(AUDIT_FIELDS)] == AUDIT_FIELDS
        assert record["task_id"] == "task-1"
        assert record["tool"] == "create_ticket"
        assert record["call_id"] == "call-9"
        assert record["idempotency_key_digest"] == key_digest(KEY)
        assert record["breaker_state"] == "closed"
        assert isinstance(record["elapsed_s"], float)
    first, second, third, decision = records
    assert (first["failure_kind"], first["result"]) == ("transient", "error")
    assert first["backoff_s"] == pytest.approx(clock.sleeps[0])
    assert second["backoff_s"] == pytest.approx(clock.sleeps[1])
    assert (third["failure_kind"], third["backoff_s"], third["result"]) == (None, None, "ok")
    assert decision["elapsed_s"] == pytest.approx(sum(clock.sleeps))


def test_no_raw_key_or_planted_secret_anywhere(clock):
    """Neither the raw idempotency key nor any planted token appears in any record."""
    dumped = json.dumps(audited_run(clock))
    assert KEY not in dumped
    for secret in SECRETS:
        assert secret not in dumped
    assert "hunter2" not in dumped
    assert "[REDACTED]" in dumped


def test_breaker_records_have_every_field():
    """Breaker transitions are audited with the same fields (None where not applicable)."""
    record = audit_record("breaker", tool="t", breaker_state="open", reason="x")
    assert tuple(record)[: len(AUDIT_FIELDS)] == AUDIT_FIELDS
    assert record["call_id"] is None


def test_jsonl_sink_writes_one_line_per_record(tmp_path, clock):
    """The JSON-lines sink appends one parseable object per record."""
    path = tmp_path / "audit" / "log.jsonl"
    with JsonLinesAuditSink(path) as sink:
        sink.emit({"event": "attempt", "n": 1})
        sink.emit({"event": "decision", "n": 2})
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["n"] for line in lines] == [1, 2]


def test_logging_sink(caplog):
    """The logging sink logs the record as JSON and attaches it as `audit`."""
    caplog.set_level(logging.INFO, logger="retrychaos.controller.audit")
    LoggingAuditSink().emit({"event": "decision", "decision": "ok"})
    (entry,) = caplog.records
    assert entry.getMessage() == '{"decision": "ok", "event": "decision"}'
    assert entry.audit == {"event": "decision", "decision": "ok"}


def test_callable_sink_receives_copies():
    """The callable sink (the harness's env.audit) gets a dict per record."""
    received = []
    CallableAuditSink(received.append).emit({"event": "attempt"})
    assert received == [{"event": "attempt"}]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abcdefghijklmnop", "Authorization: [REDACTED]"),
        ("key sk-proj-abcdefgh12345678", "key [REDACTED]"),
        ("url ?api_key=abc123&x=1", "url ?api_key=[REDACTED]&x=1"),
        ('{"password": "pw"}', '{"password": "[REDACTED]"}'),
        ("digest " + "a1" * 20, "digest [REDACTED]"),
        ("blob " + "QUJD" * 12 + "==", "blob [REDACTED]"),
        ("aws AKIAABCDEFGHIJKLMNOP", "aws [REDACTED]"),
        ("slack xoxb-1234567890-abc", "slack [REDACTED]"),
        ("nothing secret here, ticket 42", "nothing secret here, ticket 42"),
    ],
)
def test_redact_text(text, expected):
    """Token-like values are replaced, ordinary text is kept."""
    assert redact(text) == expected


def test_redact_mappings_by_key_name():
    """Keys named like secrets are redacted whatever their value; nesting is followed."""
    assert redact(ARGS) == {
        "title": "Printer on fire",
        "api_key": "[REDACTED]",
        "headers": {"Authorization": "[REDACTED]"},
        "password": "[REDACTED]",
        "note": "use [REDACTED] please",
    }
    assert redact([{"client_secret": 1}, 2, None]) == [{"client_secret": "[REDACTED]"}, 2, None]


def test_the_controller_writes_the_fields_the_harness_requires():
    """Every field the contract requires is among the fields the controller writes.

    The controller does not depend on the harness, so it keeps its own list
    (with fields of its own, such as ``event``); if the list lost a required
    field, every record it writes would be judged incomplete.
    """
    from retrychaos.contract import AUDIT_FIELDS as REQUIRED  # noqa: PLC0415

    assert set(REQUIRED) <= set(AUDIT_FIELDS), set(REQUIRED) - set(AUDIT_FIELDS)

"""The idempotency ledger on SQLite under random claims, results, releases and restarts."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from retrychaos.controller.errors import IdempotencyConflict
from retrychaos.controller.ledger import IdempotencyLedger, LedgerStatus, SqliteLedgerStore
from retrychaos.testing.profiles import profile_settings

keys = st.sampled_from(("op-1", "op-2", "op-3"))
fingerprints = st.sampled_from(("fp-a", "fp-b"))
results = st.one_of(
    st.none(),
    st.integers(-5, 5),
    st.text(max_size=5),
    st.fixed_dictionaries({"ok": st.booleans(), "id": st.integers(0, 9)}),
)


class LedgerMachine(RuleBasedStateMachine):
    """Drives a ledger over a SQLite file, restarting it at random, against a dict model.

    The model holds, per key, the fingerprint, the status and (once done) the
    result. Every step checks that a completed key returns its recorded result,
    that another fingerprint is always a conflict, and that what the ledger
    knows survives closing and reopening the file.
    """

    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory(prefix="retrychaos-ledger-")
        self.path = Path(self.tmp.name) / "ledger.sqlite3"
        self.store = SqliteLedgerStore(self.path)
        self.ledger = IdempotencyLedger(self.store)
        self.model: dict[str, tuple[str, LedgerStatus, object]] = {}
        self.t = 0.0

    def teardown(self) -> None:
        self.store.close()
        self.tmp.cleanup()

    def now(self) -> float:
        self.t += 1.0
        return self.t

    @rule(key=keys, fingerprint=fingerprints)
    def begin(self, key, fingerprint):
        known = self.model.get(key)
        if known is not None and known[0] != fingerprint:
            with pytest.raises(IdempotencyConflict):
                self.ledger.begin(key, fingerprint, at=self.now())
            return
        entry = self.ledger.begin(key, fingerprint, at=self.now())
        if known is None:
            assert entry is None, f"a free key {key!r} came back as {entry}"
            self.model[key] = (fingerprint, LedgerStatus.PENDING, None)
        else:
            assert entry is not None, f"key {key!r} was claimed before, yet begin() says it is free"
            assert entry.status is known[1]
            if known[1] is LedgerStatus.DONE:
                assert entry.result() == known[2], "a completed key must replay its recorded result"

    @precondition(lambda self: any(s is LedgerStatus.PENDING for _, s, _ in self.model.values()))
    @rule(data=st.data(), result=results)
    def complete(self, data, result):
        pending = sorted(k for k, (_, s, _) in self.model.items() if s is LedgerStatus.PENDING)
        key = data.draw(st.sampled_from(pending))
        fingerprint = self.model[key][0]
        self.ledger.complete(key, fingerprint, result, at=self.now())
        self.model[key] = (fingerprint, LedgerStatus.DONE, result)

    @rule(key=keys, fingerprint=fingerprints)
    def abandon(self, key, fingerprint):
        self.ledger.abandon(key, fingerprint)
        known = self.model.get(key)
        if known == (fingerprint, LedgerStatus.PENDING, None):
            del self.model[key]

    @rule()
    def restart(self):
        self.store.close()
        self.store = SqliteLedgerStore(self.path)
        self.ledger = IdempotencyLedger(self.store)

    @invariant()
    def agrees_with_the_model(self):
        for key in ("op-1", "op-2", "op-3"):
            entry = self.store.get(hashlib.sha256(key.encode()).hexdigest())
            known = self.model.get(key)
            if known is None:
                assert entry is None, f"key {key!r} was released or never claimed, yet {entry}"
                continue
            fingerprint, status, result = known
            assert entry is not None, f"key {key!r} was lost (after a restart?)"
            assert (entry.fingerprint, entry.status) == (fingerprint, status)
            if status is LedgerStatus.DONE:
                assert entry.result() == result, "a completed key must keep its recorded result"
            other = "fp-b" if fingerprint == "fp-a" else "fp-a"
            with pytest.raises(IdempotencyConflict):
                self.ledger.begin(key, other, at=self.t)


def test_ledger_keeps_results_refuses_conflicts_and_survives_restarts():
    """A done key replays its result, another fingerprint conflicts, a restart loses nothing."""
    run_state_machine_as_test(
        LedgerMachine, settings=settings(profile_settings(), stateful_step_count=30)
    )

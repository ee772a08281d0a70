"""The reference controller's circuit breaker under random calls, results, releases and time."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from retrychaos.controller.breaker import (
    BreakerConfig,
    BreakerState,
    BreakerTransition,
    CircuitBreaker,
    Permit,
)
from retrychaos.testing.profiles import profile_settings

CLOSED, OPEN, HALF_OPEN = BreakerState.CLOSED, BreakerState.OPEN, BreakerState.HALF_OPEN


class Clock:
    """A hand-moved monotonic clock (multiples of 0.25 s: sums stay exact in binary)."""

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    def wall(self) -> float:
        return 1_767_225_600.0 + self.t


class BreakerMachine(RuleBasedStateMachine):
    """Drives one breaker and a model of what it may do; every step compares the two.

    The model follows the documented rules: ``failure_threshold`` consecutive
    failures within ``window_s`` open it; open refuses until ``cooldown_s`` is
    over, then half-open admits at most ``half_open_max_probes`` probes at a
    time; a probe's success closes it, its failure reopens it; a result from
    before a state change (an older permit) changes nothing.
    """

    admitted = Bundle("admitted")
    finished = Bundle("finished")

    def __init__(self) -> None:
        super().__init__()
        self.clock = Clock()
        self.seen: list[BreakerTransition] = []
        self.breaker: CircuitBreaker
        self.config: BreakerConfig
        self.state = CLOSED
        self.period = 0  # the breaker's generation: one more per state change
        self.failures: list[float] = []  # consecutive failures of this closed period
        self.opened_at = 0.0
        self.probes = 0  # probes of this half-open period not yet released

    @initialize(
        threshold=st.integers(1, 4),
        window=st.sampled_from((1.0, 2.5, 10.0)),
        cooldown=st.sampled_from((0.5, 2.0, 5.0)),
        probes=st.integers(1, 3),
    )
    def build(self, threshold, window, cooldown, probes):
        self.config = BreakerConfig(
            failure_threshold=threshold,
            window_s=window,
            cooldown_s=cooldown,
            half_open_max_probes=probes,
        )
        self.breaker = CircuitBreaker(
            tool="search", clock=self.clock, config=self.config, on_transition=self.seen.append
        )

    # The model.

    def move(self, new: BreakerState) -> tuple[BreakerState, BreakerState]:
        old, self.state = self.state, new
        self.period += 1
        self.failures = []
        self.probes = 0
        if new is OPEN:
            self.opened_at = self.clock.t
        return (old, new)

    def refresh(self) -> list[tuple[BreakerState, BreakerState]]:
        cooled = self.state is OPEN and self.clock.t >= self.opened_at + self.config.cooldown_s
        return [self.move(HALF_OPEN)] if cooled else []

    def expect(self, expected: list[tuple[BreakerState, BreakerState]], what: str) -> None:
        got = [(t.old, t.new) for t in self.seen]
        self.seen.clear()
        assert got == expected, (
            f"at t={self.clock.t}: {what} made the breaker go {got}; the rules say {expected} "
            f"({self.config}, {len(self.failures)} failure(s) in the window)"
        )

    # The rules.

    @rule(target=admitted)
    def admit(self):
        expected = self.refresh()
        permit = self.breaker.admit()
        self.expect(expected, "admit()")
        if self.state is CLOSED:
            assert permit == Permit(probe=False, generation=self.period), "closed admits everyone"
        elif self.state is OPEN:
            assert permit is None, (
                f"open since t={self.opened_at}, cooldown {self.config.cooldown_s} s: "
                f"a call was admitted at t={self.clock.t}"
            )
        elif self.probes < self.config.half_open_max_probes:
            assert permit == Permit(probe=True, generation=self.period), "half-open admits a probe"
            self.probes += 1
        else:
            assert permit is None, (
                f"half-open admitted a probe beyond the {self.config.half_open_max_probes} allowed"
            )
        return permit

    @rule(target=finished, permit=consumes(admitted))
    def succeed(self, permit):
        expected = []
        if permit is not None and permit.generation == self.period:
            self.failures = []
            if permit.probe and self.state is HALF_OPEN:
                expected.append(self.move(CLOSED))
        if permit is not None:
            self.breaker.record_success(permit)
        self.expect(expected, "a success")
        return permit

    @rule(target=finished, permit=consumes(admitted))
    def fail(self, permit):
        expected = []
        if permit is not None and permit.generation == self.period:
            now = self.clock.t
            if permit.probe and self.state is HALF_OPEN:
                expected.append(self.move(OPEN))
            elif self.state is CLOSED:
                window = self.config.window_s
                self.failures = [t for t in [*self.failures, now] if t > now - window]
                if len(self.failures) >= self.config.failure_threshold:
                    expected.append(self.move(OPEN))
        if permit is not None:
            self.breaker.record_failure(permit)
        self.expect(expected, "a transient failure")
        return permit

    @rule(permit=consumes(finished) | consumes(admitted))
    def release(self, permit):
        if permit is not None:
            if permit.probe and permit.generation == self.period:
                self.probes -= 1
            self.breaker.release(permit)
        self.expect([], "release()")

    @rule(seconds=st.sampled_from((0.25, 0.5, 1.0, 2.0, 5.0)))
    def wait(self, seconds):
        self.clock.t += seconds

    @rule()
    def look(self):
        expected = self.refresh()
        state = self.breaker.state
        assert state is self.state, f"at t={self.clock.t}: the breaker is {state}, not {self.state}"
        self.expect(expected, "reading the state")

    @invariant()
    def probes_within_limit(self):
        assert 0 <= self.probes <= self.config.half_open_max_probes


def test_breaker_follows_its_rules_under_random_interleavings():
    """Open only at the threshold within the window, shut until cooldown, at most N probes."""
    run_state_machine_as_test(
        BreakerMachine, settings=settings(profile_settings(), stateful_step_count=40)
    )

"""A circuit breaker per tool: closed, open, half-open.

Closed: calls pass; `failure_threshold` consecutive transient failures within
`window_s` open it. Open: calls are refused without touching the tool until
`cooldown_s` has passed. Half-open: at most `half_open_max_probes` callers get
through as probes, every other caller is refused; a probe success closes the
breaker, a probe failure reopens it.

Results are matched to the state they were admitted in (a generation number),
so a slow success from before the breaker opened cannot close it.
"""

from __future__ import annotations

import enum
import threading
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._checks import check_greater, check_int_at_least

if TYPE_CHECKING:
    from collections.abc import Callable

    from .clock import TimeSource

__all__ = [
    "BreakerConfig",
    "BreakerRegistry",
    "BreakerState",
    "BreakerTransition",
    "CircuitBreaker",
    "Permit",
]


class BreakerState(enum.StrEnum):
    """The three states of a circuit breaker."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


# The members as module globals: `BreakerState.OPEN` is an attribute of a
# class whose metaclass defines `__getattr__`, about 800 instructions a look
# in this CPython, and every record asks the breaker's state.
_CLOSED = BreakerState.CLOSED
_OPEN = BreakerState.OPEN
_HALF_OPEN = BreakerState.HALF_OPEN


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakerConfig:
    """When a breaker opens, how long it stays open and how many probes it admits."""

    failure_threshold: int = 5
    window_s: float = 10.0
    cooldown_s: float = 5.0
    half_open_max_probes: int = 1

    def __post_init__(self) -> None:
        """Reject values outside their ranges."""
        check_int_at_least("failure_threshold", self.failure_threshold, 1)
        check_greater("window_s", self.window_s, 0)
        check_greater("cooldown_s", self.cooldown_s, 0)
        check_int_at_least("half_open_max_probes", self.half_open_max_probes, 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class Permit:
    """Admission to call the tool once (plus whatever retries run inside that attempt)."""

    probe: bool
    generation: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakerTransition:
    """A state change, for audit and metrics."""

    tool: str
    old: BreakerState
    new: BreakerState
    at: float
    reason: str


class CircuitBreaker:
    """The breaker of one tool. Thread-safe; never awaits, so coroutine-safe too."""

    def __init__(
        self,
        *,
        tool: str,
        clock: TimeSource,
        config: BreakerConfig | None = None,
        on_transition: Callable[[BreakerTransition], None] | None = None,
    ) -> None:
        """Create a closed breaker for `tool`."""
        self.tool = tool
        self.config = BreakerConfig() if config is None else config
        self._clock = clock
        self._on_transition = on_transition
        self._state = _CLOSED
        self._generation = 0
        self._failures: deque[float] = deque()
        self._opened_at = 0.0
        self._probes = 0
        # Permits are immutable values: a closed breaker hands every caller of
        # one generation the same one instead of building it per attempt.
        self._permit = Permit(probe=False, generation=0)
        self._lock = threading.Lock()

    @property
    def state(self) -> BreakerState:
        """The current state (an open breaker past its cool-down reports half-open)."""
        state = self._state
        return state if state is not _OPEN else self.state_at(None)

    def state_at(self, now: float | None) -> BreakerState:
        """`state`, with the caller's reading of the clock (None: the breaker reads it)."""
        state = self._state
        if state is not _OPEN:  # only an open breaker moves by being looked at
            return state
        if now is not None and now < self._opened_at + self.config.cooldown_s:
            return state  # still cooling down at `now`: nothing to move, no lock to take
        lock = self._lock  # acquire and release: see `controller.budget`
        lock.acquire()
        try:
            transitions = self._refresh_locked(now)
            state = self._state
        finally:
            lock.release()
        if transitions:  # most steps move nothing: no call to make
            self._emit(transitions)
        return state

    def admit(self, *, now: float | None = None) -> Permit | None:
        """Return a permit to call the tool, or None when the breaker refuses.

        `now` is the caller's reading of the clock, when it has just taken one
        (only an open breaker needs it, to see whether its cool-down is over).
        """
        # The two common answers need no lock. A closed breaker's permit of the
        # current generation: `_permit` is only ever set to a closed
        # generation's permit, and a generation has one state, so a match read
        # now says the breaker is closed now. An open breaker still cooling down
        # at `now` refuses: looking at it moves nothing. Each is what the locked
        # path gives at the moment of the reads.
        closed = self._permit
        if closed.generation == self._generation:
            return closed
        if (
            now is not None
            and self._state is _OPEN
            and now < self._opened_at + self.config.cooldown_s
        ):
            return None
        lock = self._lock
        lock.acquire()
        try:
            transitions = self._refresh_locked(now)
            permit: Permit | None = None
            if self._state is _CLOSED:
                permit = self._permit
                if permit.generation != self._generation:
                    permit = self._permit = Permit(probe=False, generation=self._generation)
            elif self._state is _HALF_OPEN and self._probes < self.config.half_open_max_probes:
                self._probes += 1
                permit = Permit(probe=True, generation=self._generation)
        finally:
            lock.release()
        if transitions:  # most steps move nothing: no call to make
            self._emit(transitions)
        return permit

    def record_success(self, permit: Permit) -> None:
        """The service answered (success or a definite, non-transient error)."""
        if not permit.probe and not self._failures:
            # Nothing to clear and no state to move: what the locked path does
            # at the moment of the read, without the lock.
            return
        lock = self._lock
        lock.acquire()
        try:
            transitions: list[BreakerTransition] = []
            # A permit of the current generation was issued in the current state:
            # a probe's breaker is half-open, any other permit's is closed.
            if permit.generation == self._generation:
                self._failures.clear()
                if permit.probe:
                    transitions.append(self._move_locked(_CLOSED, "probe succeeded"))
        finally:
            lock.release()
        if transitions:  # most steps move nothing: no call to make
            self._emit(transitions)

    def record_failure(self, permit: Permit) -> None:
        """A transient failure happened under `permit` (may open or reopen the breaker)."""
        with self._lock:
            transitions: list[BreakerTransition] = []
            if permit.generation == self._generation:
                now = self._clock.now()
                if permit.probe:
                    transitions.append(self._open_locked(now, "probe failed"))
                else:
                    self._failures.append(now)
                    while self._failures and self._failures[0] <= now - self.config.window_s:
                        self._failures.popleft()
                    if len(self._failures) >= self.config.failure_threshold:
                        transitions.append(
                            self._open_locked(
                                now,
                                f"{len(self._failures)} consecutive transient failures "
                                f"within {self.config.window_s:g} s",
                            )
                        )
        if transitions:  # most steps move nothing: no call to make
            self._emit(transitions)

    def release(self, permit: Permit) -> None:
        """End `permit` (always, even on cancellation): frees its probe slot."""
        if not permit.probe:
            # Only a probe holds a slot; a permit is immutable, so this needs no lock.
            return
        with self._lock:
            if permit.generation == self._generation:
                self._probes -= 1

    def _refresh_locked(self, now: float | None) -> list[BreakerTransition]:
        if self._state is _OPEN:
            if now is None:
                now = self._clock.now()
            if now >= self._opened_at + self.config.cooldown_s:
                return [self._move_locked(_HALF_OPEN, "cool-down over")]
        return []

    def _open_locked(self, now: float, reason: str) -> BreakerTransition:
        self._opened_at = now
        return self._move_locked(_OPEN, reason)

    def _move_locked(self, new: BreakerState, reason: str) -> BreakerTransition:
        old = self._state
        self._state = new
        self._generation += 1
        self._probes = 0
        self._failures.clear()
        return BreakerTransition(
            tool=self.tool, old=old, new=new, at=self._clock.now(), reason=reason
        )

    def _emit(self, transitions: list[BreakerTransition]) -> None:
        # Callbacks run outside the lock: a sink may be slow or re-enter.
        if self._on_transition is not None:
            for transition in transitions:
                self._on_transition(transition)


class BreakerRegistry:
    """One breaker per tool name, created on first use."""

    def __init__(
        self,
        *,
        clock: TimeSource,
        config: BreakerConfig | None = None,
        on_transition: Callable[[BreakerTransition], None] | None = None,
    ) -> None:
        """Create an empty registry; every breaker shares `config` and `on_transition`."""
        self._clock = clock
        self._config = config  # None: each breaker takes the default
        self._on_transition = on_transition
        self._breakers: dict[str, CircuitBreaker] = {}
        self._lock = threading.Lock()

    def for_tool(self, tool: str) -> CircuitBreaker:
        """Return the breaker of `tool`."""
        # A breaker, once made, is never replaced nor removed, and a dict
        # lookup is atomic: a hit needs no lock, a miss makes it under the lock.
        breaker = self._breakers.get(tool)
        if breaker is not None:
            return breaker
        with self._lock:
            breaker = self._breakers.get(tool)
            if breaker is None:
                breaker = CircuitBreaker(
                    tool=tool,
                    clock=self._clock,
                    config=self._config,
                    on_transition=self._on_transition,
                )
                self._breakers[tool] = breaker
            return breaker

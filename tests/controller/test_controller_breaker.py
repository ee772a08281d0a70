import asyncio
import random

from controller_fakes import FakeClock, ScriptedTool, ctx, status_error

from retrychaos.controller import (
    BreakerConfig,
    BreakerState,
    CircuitBreaker,
    MemoryAuditSink,
    ReferenceController,
    RetryPolicy,
)
from retrychaos.controller.breaker import BreakerRegistry

ONE_SHOT = RetryPolicy(max_attempts_per_call=1)


def breaker(clock, **config):
    """Return a breaker and the list its transitions are appended to."""
    transitions = []
    cb = CircuitBreaker(
        tool="search",
        clock=clock,
        config=BreakerConfig(**config),
        on_transition=transitions.append,
    )
    return cb, transitions


def fail(cb, times=1):
    """Record `times` transient failures."""
    for _ in range(times):
        permit = cb.admit()
        assert permit is not None
        cb.record_failure(permit)
        cb.release(permit)


def test_opens_after_consecutive_failures_within_the_window(clock):
    """Five transient failures within 10 s open the breaker."""
    cb, transitions = breaker(clock)
    fail(cb, 4)
    assert cb.state is BreakerState.CLOSED
    fail(cb)
    assert cb.state is BreakerState.OPEN
    assert [(t.old, t.new, t.reason) for t in transitions] == [
        (BreakerState.CLOSED, BreakerState.OPEN, "5 consecutive transient failures within 10 s")
    ]


def test_failures_outside_the_window_do_not_count(clock):
    """Failures spread wider than the window never open it."""
    cb, _ = breaker(clock)
    for _ in range(10):
        fail(cb)
        clock.advance(3)
    assert cb.state is BreakerState.CLOSED


def test_a_success_resets_the_count(clock):
    """Failures must be consecutive: a success in between starts over."""
    cb, _ = breaker(clock)
    fail(cb, 4)
    permit = cb.admit()
    assert permit is not None
    cb.record_success(permit)
    fail(cb, 4)
    assert cb.state is BreakerState.CLOSED


def test_open_refuses_until_the_cooldown_then_half_opens(clock):
    """While open, admit() refuses; after the cool-down the breaker is half-open."""
    cb, transitions = breaker(clock)
    fail(cb, 5)
    clock.advance(4.9)
    assert cb.admit() is None
    clock.advance(0.1)
    assert cb.state is BreakerState.HALF_OPEN
    assert transitions[-1].reason == "cool-down over"


def test_probe_success_closes_and_probe_failure_reopens(clock):
    """A successful probe closes the breaker; a failed probe reopens it for a new cool-down."""
    cb, transitions = breaker(clock)
    fail(cb, 5)
    clock.advance(5)
    probe = cb.admit()
    assert probe is not None
    assert probe.probe
    cb.record_failure(probe)
    cb.release(probe)
    assert cb.state is BreakerState.OPEN
    clock.advance(5)
    probe = cb.admit()
    assert probe is not None
    cb.record_success(probe)
    cb.release(probe)
    assert cb.state is BreakerState.CLOSED
    assert [t.new.value for t in transitions] == [
        "open",
        "half_open",
        "open",
        "half_open",
        "closed",
    ]


def test_results_from_before_a_transition_are_ignored(clock):
    """A slow success admitted while closed cannot close a breaker that opened since."""
    cb, _ = breaker(clock)
    early = cb.admit()
    assert early is not None
    fail(cb, 5)
    cb.record_success(early)
    cb.release(early)
    assert cb.state is BreakerState.OPEN


def test_half_open_admits_only_the_configured_probes(clock):
    """Half-open hands out at most half_open_max_probes permits at once."""
    cb, _ = breaker(clock, half_open_max_probes=2)
    fail(cb, 5)
    clock.advance(5)
    permits = [cb.admit() for _ in range(5)]
    assert sum(p is not None for p in permits) == 2
    first = permits[0]
    assert first is not None
    cb.release(first)
    assert cb.admit() is not None


def trip(ctl, clock):
    """Five failing one-shot calls open the breaker of `search`."""
    for i in range(5):
        tool = ScriptedTool(script=[status_error(503)])
        asyncio.run(ctl.call(tool, {}, ctx(task_id=f"trip-{i}")))
    assert ctl.breaker_for("search").state is BreakerState.OPEN


def test_open_breaker_fails_fast_without_touching_the_tool():
    """While open, calls return circuit_open and the tool is never called."""
    clock = FakeClock()
    ctl = ReferenceController(clock=clock, rng=random.Random(0), policy=ONE_SHOT)
    trip(ctl, clock)
    tool = ScriptedTool()
    result = asyncio.run(ctl.call(tool, {}, ctx(task_id="later")))
    assert result == {
        "ok": False,
        "decision": "circuit_open",
        "error": "circuit breaker for 'search' is open: the tool was not called",
        "failure_kind": None,
        "attempts": 0,
        "tool": "search",
    }
    assert tool.calls == []


def probe_gather(probe_fails, probes=1):
    """Trip the breaker, wait out the cool-down, then send 100 concurrent callers."""
    clock = FakeClock()
    sink = MemoryAuditSink()
    ctl = ReferenceController(
        clock=clock,
        rng=random.Random(0),
        policy=ONE_SHOT,
        breaker_config=BreakerConfig(half_open_max_probes=probes),
        audit_sinks=[sink],
    )
    trip(ctl, clock)
    clock.advance(5)
    reached = []

    async def tool(args, *, idempotency_key=None, gate=None):
        reached.append(args)
        for _ in range(3):
            await asyncio.sleep(0)  # stay in flight while the others arrive
        if probe_fails:
            raise status_error(503)
        return "ok"

    async def main():
        return await asyncio.gather(
            *(ctl.call(tool, {"n": i}, ctx(task_id=f"t{i}")) for i in range(100))
        )

    return ctl, sink, reached, asyncio.run(main())


def test_half_open_lets_one_probe_through_among_100_concurrent_callers():
    """Of 100 concurrent callers only the probe reaches the tool; its success closes the breaker."""
    ctl, sink, reached, results = probe_gather(probe_fails=False)
    assert len(reached) == 1
    assert results.count("ok") == 1
    assert [r["decision"] for r in results if r != "ok"] == ["circuit_open"] * 99
    assert ctl.breaker_for("search").state is BreakerState.CLOSED
    states = [r["breaker_state"] for r in sink.records if r["event"] == "breaker"]
    assert states == ["open", "half_open", "closed"]
    assert ctl.metrics.snapshot().breaker_opens == 1


def test_failed_probe_reopens_and_the_others_stay_out():
    """A failing probe reopens the breaker; nobody else reached the tool."""
    ctl, _, reached, results = probe_gather(probe_fails=True)
    assert len(reached) == 1
    assert ctl.breaker_for("search").state is BreakerState.OPEN
    # The probe's own failure reopened the breaker, so it too ends circuit_open.
    assert [r["decision"] for r in results] == ["circuit_open"] * 100
    assert ctl.metrics.snapshot().breaker_opens == 2


def test_probe_limit_is_configurable_under_concurrency():
    """With half_open_max_probes=3, exactly three of 100 callers reach the tool."""
    _, _, reached, results = probe_gather(probe_fails=False, probes=3)
    assert len(reached) == 3
    assert results.count("ok") == 3


def test_argument_errors_count_as_the_service_answering():
    """A probe answered with a 4xx proves the service is up: the breaker closes."""
    clock = FakeClock()
    ctl = ReferenceController(clock=clock, rng=random.Random(0), policy=ONE_SHOT)
    trip(ctl, clock)
    clock.advance(5)
    asyncio.run(ctl.call(ScriptedTool(script=[status_error(404)]), {}, ctx(task_id="p")))
    assert ctl.breaker_for("search").state is BreakerState.CLOSED


def test_transitions_say_which_tool_and_when(clock):
    """Each transition names the breaker's tool and the clock time it happened at."""
    cb, transitions = breaker(clock)
    clock.advance(1.0)
    fail(cb, 5)
    clock.advance(5.0)
    probe = cb.admit()
    assert probe is not None
    clock.advance(0.5)
    cb.record_success(probe)
    cb.release(probe)
    assert [(t.tool, t.old.value, t.new.value, t.at) for t in transitions] == [
        ("search", "closed", "open", 1.0),
        ("search", "open", "half_open", 6.0),
        ("search", "half_open", "closed", 6.5),
    ]
    assert transitions[-1].reason == "probe succeeded"


def test_a_failed_probe_says_so(clock):
    """The transition back to open after a probe failed gives that reason."""
    cb, transitions = breaker(clock)
    fail(cb, 5)
    clock.advance(5.0)
    fail(cb)
    assert [(t.new.value, t.reason) for t in transitions[-2:]] == [
        ("half_open", "cool-down over"),
        ("open", "probe failed"),
    ]


def test_a_failure_exactly_one_window_old_no_longer_counts(clock):
    """Failures window_s ago or earlier fall out of the count: four then one at +10 s stay closed."""
    cb, _ = breaker(clock)
    fail(cb, 4)
    clock.advance(10.0)
    fail(cb)
    assert cb.state is BreakerState.CLOSED


def test_registry_gives_each_tool_one_breaker_with_the_shared_config(clock):
    """for_tool returns the same breaker for a name, a new one per name, all with one config."""
    config = BreakerConfig(failure_threshold=2)
    registry = BreakerRegistry(clock=clock, config=config)
    search = registry.for_tool("search")
    assert registry.for_tool("search") is search
    other = registry.for_tool("geocode")
    assert other is not search
    assert (search.tool, other.tool, other.config) == ("search", "geocode", config)

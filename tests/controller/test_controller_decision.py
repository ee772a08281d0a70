import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrychaos.controller import (
    BudgetState,
    Failure,
    FailureKind,
    Final,
    Retry,
    RetryPolicy,
    ToolSemantics,
    Verdict,
    decide,
)
from retrychaos.controller.decision import Prior, Standing, final_payload, readmit, standing

READ = ToolSemantics(side_effect=False)
SAFE_WRITE = ToolSemantics(side_effect=True, idempotency_key="k", idempotency_supported=True)
KEYLESS_WRITE = ToolSemantics(side_effect=True)
POLICY = RetryPolicy()


def budget(task=1, tool=1, deadline=8.0):
    """A budget snapshot with the seed limits."""
    return BudgetState(
        task_attempts=task,
        tool_attempts=tool,
        max_task_attempts=5,
        max_tool_attempts=3,
        deadline=deadline,
    )


def failure(kind=FailureKind.TRANSIENT, **kwargs):
    """A failure with message 'boom'."""
    kwargs.setdefault("message", "boom")
    return Failure(kind=kind, **kwargs)


def run(f, semantics=READ, *, attempt=1, state=None, now=0.0, jitter=0.0, **kwargs):
    """Decide with the default policy."""
    return decide(
        failure=f,
        semantics=semantics,
        attempt=attempt,
        budget=budget() if state is None else state,
        policy=POLICY,
        now=now,
        jitter=jitter,
        **kwargs,
    )


def test_transient_read_retries_after_backoff():
    """A transient failure of a read-only tool is retried after the capped backoff."""
    assert run(failure()) == Retry(delay_s=0.4)
    decision = run(failure(), attempt=2, state=budget(2, 2), jitter=1.0)
    assert isinstance(decision, Retry)
    assert decision.delay_s == pytest.approx(0.96)


def test_argument_goes_to_the_model():
    """ARGUMENT returns model_fix with the server's message, never a replay."""
    assert run(failure(FailureKind.ARGUMENT, message="HTTP 422")) == Final(
        verdict=Verdict.MODEL_FIX, message="HTTP 422"
    )


def test_permanent_stops_at_once():
    """PERMANENT stops, even with budget left."""
    assert run(failure(FailureKind.PERMANENT)) == Final(verdict=Verdict.STOP, message="boom")


def test_unknown_read_only_gets_exactly_one_conservative_retry():
    """UNKNOWN on a read-only tool is retried once, then stops."""
    assert run(failure(FailureKind.UNKNOWN)) == Retry(delay_s=0.4, conservative=True)
    assert run(failure(FailureKind.UNKNOWN), unknown_retries_used=1) == Final(
        verdict=Verdict.STOP, message="boom"
    )


def test_unknown_retry_can_be_switched_off():
    """With conservative_unknown_retry=False an UNKNOWN read stops at once."""
    decision = decide(
        failure=failure(FailureKind.UNKNOWN),
        semantics=READ,
        attempt=1,
        budget=budget(),
        policy=RetryPolicy(conservative_unknown_retry=False),
        now=0.0,
        jitter=0.0,
    )
    assert decision == Final(verdict=Verdict.STOP, message="boom")


def test_unknown_side_effect_with_dedup_stops():
    """UNKNOWN on a side effect stops even when the service deduplicates."""
    assert run(failure(FailureKind.UNKNOWN), SAFE_WRITE) == Final(
        verdict=Verdict.STOP, message="boom"
    )


def test_keyless_side_effect_with_unknown_outcome_needs_a_manual_check():
    """A keyless side effect whose attempt may have landed returns manual_check."""
    decision = run(failure(FailureKind.UNKNOWN), KEYLESS_WRITE)
    assert decision == Final(
        verdict=Verdict.MANUAL_CHECK,
        message=(
            "boom; the side effect may have happened and the call has no usable idempotency "
            "guarantee: check its status before acting again"
        ),
    )


def test_keyless_side_effect_that_never_left_stops():
    """A keyless side effect whose request never left stops, unretried."""
    decision = run(failure(may_have_committed=False), KEYLESS_WRITE)
    assert decision == Final(
        verdict=Verdict.STOP,
        message=(
            "boom; not retried: a side effect without a usable idempotency guarantee is never "
            "repeated automatically"
        ),
    )


def test_idempotency_is_checked_before_the_budget():
    """Order: a keyless side effect says manual_check even when the budget is spent too."""
    decision = run(failure(), KEYLESS_WRITE, state=budget(5, 3))
    assert isinstance(decision, Final)
    assert decision.verdict is Verdict.MANUAL_CHECK


def test_kind_is_checked_before_the_budget():
    """Order: an ARGUMENT failure says model_fix even when the budget is spent."""
    decision = run(failure(FailureKind.ARGUMENT), state=budget(5, 3), now=100.0)
    assert decision == Final(verdict=Verdict.MODEL_FIX, message="boom")


def test_open_breaker_ends_the_call():
    """A transient failure while the tool's breaker is open returns circuit_open."""
    assert run(failure(), breaker_open=True) == Final(
        verdict=Verdict.CIRCUIT_OPEN, message="boom; circuit breaker open"
    )


@pytest.mark.parametrize(
    ("attempt", "state", "message"),
    [
        (3, budget(3, 3), "boom; call budget spent: 3 of 3 attempts"),
        (1, budget(4, 3), "boom; tool budget spent: 3 of 3 attempts"),
        (1, budget(5, 1), "boom; task budget spent: 5 of 5 attempts"),
    ],
)
def test_budget_limits(attempt, state, message):
    """Each attempt limit (call, tool, task) ends the call with budget_exhausted."""
    assert run(failure(), attempt=attempt, state=state) == Final(
        verdict=Verdict.BUDGET_EXHAUSTED, message=message
    )


def test_deadline_passed():
    """At or after the deadline the call ends with deadline_exceeded."""
    assert run(failure(), now=8.0) == Final(
        verdict=Verdict.DEADLINE_EXCEEDED, message="boom; task deadline passed"
    )


def test_the_coming_sleep_counts_against_the_deadline():
    """If now + delay reaches the deadline, give up now instead of sleeping."""
    assert run(failure(), now=7.7) == Final(
        verdict=Verdict.DEADLINE_EXCEEDED,
        message="boom; waiting 0.400 s would cross the task deadline (0.300 s left)",
    )


def test_retry_after_takes_precedence_with_jitter_on_top():
    """A Retry-After longer than the backoff is the floor of the wait, plus jitter."""
    assert run(failure(retry_after_s=2.0), jitter=0.5) == Retry(delay_s=2.2)


def test_short_retry_after_still_backs_off():
    """Retry-After 0 (a past date) still waits the backoff, so waits stay positive."""
    assert run(failure(retry_after_s=0.0)) == Retry(delay_s=0.4)


def test_retry_after_beyond_the_deadline_gives_up_now():
    """A Retry-After that would cross the deadline returns deadline_exceeded."""
    assert run(failure(retry_after_s=30.0), now=1.0) == Final(
        verdict=Verdict.DEADLINE_EXCEEDED,
        message="boom; Retry-After 30 s would cross the task deadline (7.000 s left)",
    )


def test_deadline_check_comes_before_the_retry_after_cap():
    """An absurd Retry-After is judged against the deadline first."""
    decision = run(failure(retry_after_s=float("inf")))
    assert isinstance(decision, Final)
    assert decision.verdict is Verdict.DEADLINE_EXCEEDED


def test_retry_after_above_the_cap_ends_the_call():
    """Within a far deadline, a Retry-After above max_retry_after_s is not waited for."""
    assert run(failure(retry_after_s=600.0), state=budget(deadline=10_000.0)) == Final(
        verdict=Verdict.BUDGET_EXHAUSTED,
        message="boom; Retry-After 600 s exceeds max_retry_after_s=60",
    )


failures = st.builds(
    Failure,
    kind=st.sampled_from(FailureKind),
    message=st.text(max_size=20),
    status=st.none() | st.integers(100, 599),
    retry_after_s=st.none() | st.floats(min_value=0, allow_nan=False),
    may_have_committed=st.booleans(),
)
unrepeatable = st.sampled_from(
    [
        ToolSemantics(side_effect=True),
        ToolSemantics(side_effect=True, idempotency_key="k", idempotency_supported=False),
        ToolSemantics(side_effect=True, idempotency_key="", idempotency_supported=True),
        ToolSemantics(side_effect=True, idempotency_key=None, idempotency_supported=True),
    ]
)


@given(
    f=failures,
    semantics=unrepeatable,
    attempt=st.integers(1, 10),
    now=st.floats(0, 20),
    jitter=st.floats(0, 1),
    unknown_used=st.integers(0, 2),
    breaker_open=st.booleans(),
)
def test_unprotected_side_effects_never_get_a_retry_decision(  # noqa: PLR0917 - @given
    f, semantics, attempt, now, jitter, unknown_used, breaker_open
):
    """Whatever the failure, budget or time, an unprotected side effect gets a final decision."""
    decision = run(
        f,
        semantics,
        attempt=attempt,
        now=now,
        jitter=jitter,
        unknown_retries_used=unknown_used,
        breaker_open=breaker_open,
    )
    assert isinstance(decision, Final)
    expected = {
        FailureKind.ARGUMENT: {Verdict.MODEL_FIX},
        FailureKind.PERMANENT: {Verdict.STOP},
    }.get(f.kind, {Verdict.MANUAL_CHECK} if f.may_have_committed else {Verdict.STOP})
    assert decision.verdict in expected


@given(f=failures, now=st.floats(0, 20), jitter=st.floats(0, 1), attempt=st.integers(1, 10_000))
def test_a_retry_never_sleeps_past_the_deadline(f, now, jitter, attempt):
    """Every Retry decision's wait ends strictly before the deadline and never early."""
    decision = run(f, attempt=attempt, state=budget(0, 0), now=now, jitter=jitter)
    if isinstance(decision, Retry):
        assert now + decision.delay_s < 8.0
        if f.retry_after_s is not None:
            assert decision.delay_s >= f.retry_after_s


def test_operation_attempts_count_toward_the_call_limit():
    """The call limit counts the operation's attempts across invocations, not just this call's."""
    state = BudgetState(
        task_attempts=3,
        tool_attempts=3,
        max_task_attempts=5,
        max_tool_attempts=5,
        deadline=8.0,
        operation_attempts=3,
    )
    assert run(failure(), attempt=1, state=state) == Final(
        verdict=Verdict.BUDGET_EXHAUSTED, message="boom; call budget spent: 3 of 3 attempts"
    )


@pytest.mark.parametrize(
    ("verdict", "f", "semantics", "reached", "expected"),
    [
        (Verdict.STOP, failure(FailureKind.PERMANENT), READ, True, Standing.ARGS),
        (Verdict.MODEL_FIX, failure(FailureKind.ARGUMENT), SAFE_WRITE, True, Standing.ARGS),
        (
            Verdict.MANUAL_CHECK,
            failure(FailureKind.UNKNOWN),
            KEYLESS_WRITE,
            True,
            Standing.OPERATION,
        ),
        (Verdict.STOP, failure(), KEYLESS_WRITE, True, Standing.ARGS),
        (Verdict.STOP, failure(reached=False), KEYLESS_WRITE, False, None),
        (Verdict.STOP, failure(FailureKind.UNKNOWN), SAFE_WRITE, True, Standing.ARGS),
        (Verdict.STOP, failure(FailureKind.UNKNOWN), READ, True, Standing.ARGS),
        (Verdict.BUDGET_EXHAUSTED, failure(), READ, True, None),
        (Verdict.BUDGET_EXHAUSTED, None, KEYLESS_WRITE, False, None),
        (Verdict.OK, None, KEYLESS_WRITE, True, None),
    ],
)
def test_standing(verdict, f, semantics, reached, expected):
    """Which final decisions stand for re-invocations, and for what (arguments or operation)."""
    assert standing(verdict=verdict, failure=f, semantics=semantics, reached=reached) is expected


def readmit_at(now, *, attempts=1, failed_at=0.0, deadline=8.0, jitter=0.0):
    """Readmit with the default policy."""
    return readmit(
        prior=Prior(attempts=attempts, failed_at=failed_at),
        budget=budget(deadline=deadline),
        policy=POLICY,
        now=now,
        jitter=jitter,
    )


def test_readmit_without_a_failure_admits_at_once():
    """A first invocation, or one after a success, is not delayed."""
    assert readmit_at(0.0, failed_at=None) is None
    assert readmit_at(0.0, attempts=0) is None


def test_readmit_waits_the_rest_of_the_backoff_due():
    """The wait is the backoff after attempt `attempts`, from the end of that attempt."""
    assert readmit_at(0.1) == Retry(delay_s=pytest.approx(0.3))
    assert readmit_at(1.0, attempts=3, failed_at=1.0, jitter=1.0) == Retry(
        delay_s=pytest.approx(1.92)
    )
    assert readmit_at(0.5) is None


def test_readmit_gives_up_when_the_wait_crosses_the_deadline():
    """A wait reaching the deadline ends the call with deadline_exceeded."""
    assert readmit_at(7.7, failed_at=7.7) == Final(
        verdict=Verdict.DEADLINE_EXCEEDED,
        message=(
            "the backoff after attempt 1 of this operation ends in 0.400 s, "
            "beyond the task deadline (0.300 s left)"
        ),
    )


def test_unprotected_side_effect_passes_definite_answers_on_with_their_message():
    """A keyless side effect's argument error goes to the model, a permanent one stops, as told."""
    assert run(failure(FailureKind.ARGUMENT, message="HTTP 422"), KEYLESS_WRITE) == Final(
        verdict=Verdict.MODEL_FIX, message="HTTP 422"
    )
    assert run(failure(FailureKind.PERMANENT, message="HTTP 403"), KEYLESS_WRITE) == Final(
        verdict=Verdict.STOP, message="HTTP 403"
    )


def test_retry_after_ending_exactly_at_the_deadline_gives_up():
    """A Retry-After equal to the time left is too long: the retry would start at the deadline."""
    assert run(failure(retry_after_s=8.0)) == Final(
        verdict=Verdict.DEADLINE_EXCEEDED,
        message="boom; Retry-After 8 s would cross the task deadline (8.000 s left)",
    )


def test_retry_after_at_the_cap_is_waited_for():
    """A Retry-After of exactly max_retry_after_s is honoured, not refused."""
    decision = run(failure(retry_after_s=60.0), state=budget(deadline=10_000.0))
    assert decision == Retry(delay_s=60.0)


def test_readmit_at_the_end_of_the_backoff_admits_at_once():
    """An invocation arriving exactly when the backoff ends is not delayed further."""
    assert readmit_at(0.4) is None


def test_readmit_gives_up_when_the_wait_ends_exactly_at_the_deadline():
    """A backoff that would end at the deadline itself ends the call."""
    assert readmit_at(0.0, deadline=0.4) == Final(
        verdict=Verdict.DEADLINE_EXCEEDED,
        message=(
            "the backoff after attempt 1 of this operation ends in 0.400 s, "
            "beyond the task deadline (0.400 s left)"
        ),
    )


def test_final_payload_carries_fix_details_only_for_model_fix():
    """A stop after a 409 says what happened, without the model-fix keys."""
    payload = final_payload(
        verdict=Verdict.STOP,
        message="HTTP 409",
        failure=failure(FailureKind.PERMANENT, message="HTTP 409", code="CONFLICT", field="id"),
        attempts=1,
        tool="create",
    )
    assert payload == {
        "ok": False,
        "decision": "stop",
        "error": "HTTP 409",
        "failure_kind": "permanent",
        "attempts": 1,
        "tool": "create",
    }


def test_a_backoff_ending_exactly_at_the_deadline_gives_up():
    """A backoff equal to the time left is too long: the retry would start at the deadline."""
    assert run(failure(), state=budget(deadline=0.4)) == Final(
        verdict=Verdict.DEADLINE_EXCEEDED,
        message="boom; waiting 0.400 s would cross the task deadline (0.400 s left)",
    )

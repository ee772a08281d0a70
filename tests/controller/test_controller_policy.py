import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrychaos.controller import (
    BreakerConfig,
    ConfigurationError,
    ControllerError,
    RetryPolicy,
    backoff_delay,
    exponential_delay,
)


def test_defaults_are_the_articles_numbers():
    """The default policy is 5 per task, 3 per tool and call, 8 s, 0.4 s base, 4 s cap, 20%."""
    policy = RetryPolicy()
    assert (
        policy.max_attempts_per_task,
        policy.max_attempts_per_tool,
        policy.max_attempts_per_call,
        policy.max_elapsed_s,
        policy.base_delay_s,
        policy.max_delay_s,
        policy.jitter_ratio,
    ) == (5, 3, 3, 8.0, 0.4, 4.0, 0.2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"base_delay_s": -1}, "base_delay_s must be >= 0, got -1"),
        ({"max_delay_s": -0.5}, "max_delay_s must be >= 0, got -0.5"),
        ({"max_delay_s": 0.1}, "max_delay_s must be >= base_delay_s (0.4), got 0.1"),
        ({"jitter_ratio": 1.5}, "jitter_ratio must be between 0 and 1, got 1.5"),
        ({"jitter_ratio": math.nan}, "jitter_ratio must be between 0 and 1, got nan"),
        ({"max_elapsed_s": 0}, "max_elapsed_s must be > 0, got 0"),
        ({"max_elapsed_s": math.inf}, "max_elapsed_s must be > 0, got inf"),
        ({"max_attempts_per_task": 0}, "max_attempts_per_task must be an integer >= 1, got 0"),
        ({"max_attempts_per_tool": 2.5}, "max_attempts_per_tool must be an integer >= 1, got 2.5"),
        (
            {"max_attempts_per_call": True},
            "max_attempts_per_call must be an integer >= 1, got True",
        ),
        ({"max_retry_after_s": -3}, "max_retry_after_s must be >= 0, got -3"),
        (
            {"conservative_unknown_retry": "yes"},
            "conservative_unknown_retry must be True or False, got 'yes'",
        ),
    ],
)
def test_invalid_policy_names_field_value_and_range(kwargs, message):
    """An invalid setting raises ConfigurationError naming the field, the value and the range."""
    with pytest.raises(ConfigurationError) as caught:
        RetryPolicy(**kwargs)
    assert str(caught.value) == message
    assert isinstance(caught.value, ControllerError)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"failure_threshold": 0}, "failure_threshold must be an integer >= 1, got 0"),
        ({"window_s": 0}, "window_s must be > 0, got 0"),
        ({"cooldown_s": -1}, "cooldown_s must be > 0, got -1"),
        ({"half_open_max_probes": 0}, "half_open_max_probes must be an integer >= 1, got 0"),
    ],
)
def test_invalid_breaker_config_names_field_value_and_range(kwargs, message):
    """An invalid breaker setting raises ConfigurationError with the same message shape."""
    with pytest.raises(ConfigurationError) as caught:
        BreakerConfig(**kwargs)
    assert str(caught.value) == message


def test_policy_is_frozen():
    """A policy cannot be changed after construction."""
    policy = RetryPolicy()
    with pytest.raises(AttributeError):
        policy.base_delay_s = 1.0  # type: ignore[misc]


def test_backoff_doubles_then_caps():
    """Without jitter the delays are 0.4, 0.8, 1.6, 3.2, then the 4 s cap."""
    policy = RetryPolicy()
    delays = [backoff_delay(policy, attempt, 0.0) for attempt in range(1, 8)]
    assert delays == pytest.approx([0.4, 0.8, 1.6, 3.2, 4.0, 4.0, 4.0])


def test_full_jitter_draw_adds_the_ratio():
    """A jitter draw of 1 adds exactly jitter_ratio of the delay."""
    assert backoff_delay(RetryPolicy(), 2, 1.0) == pytest.approx(0.96)


def test_invalid_attempt_and_jitter_are_rejected():
    """Attempt numbers start at 1 and jitter draws lie in [0, 1]."""
    with pytest.raises(ConfigurationError) as caught:
        exponential_delay(RetryPolicy(), 0)
    assert str(caught.value) == "attempt must be an integer >= 1, got 0"
    with pytest.raises(ConfigurationError) as caught:
        backoff_delay(RetryPolicy(), 1, 1.5)
    assert str(caught.value) == "jitter must be between 0 and 1, got 1.5"


policies = st.builds(
    lambda base, extra, ratio: RetryPolicy(
        base_delay_s=base, max_delay_s=base + extra, jitter_ratio=ratio
    ),
    st.floats(min_value=0, max_value=1e6) | st.just(5e-324),
    st.floats(min_value=0, max_value=1e6),
    st.floats(min_value=0, max_value=1),
)


@given(
    policy=policies,
    attempt=st.integers(min_value=1, max_value=10_000),
    jitter=st.floats(min_value=0, max_value=1),
)
def test_backoff_is_finite_and_bounded_for_every_attempt(policy, attempt, jitter):
    """For attempts up to 10,000 the delay is finite and within [d, d * (1 + ratio)] <= cap."""
    base = exponential_delay(policy, attempt)
    delay = backoff_delay(policy, attempt, jitter)
    assert math.isfinite(delay)
    assert 0 <= base <= policy.max_delay_s
    # A relative slack of one part in 10**12 absorbs float rounding.
    assert base <= delay <= base * (1 + policy.jitter_ratio) * (1 + 1e-12)
    assert delay <= policy.max_delay_s * (1 + policy.jitter_ratio) * (1 + 1e-12)


@given(policy=policies, attempt=st.integers(min_value=1, max_value=10_000))
def test_backoff_never_decreases_with_attempts(policy, attempt):
    """The exponential part is monotone: a later attempt never waits less."""
    assert exponential_delay(policy, attempt) <= exponential_delay(policy, attempt + 1)


@given(attempt=st.integers(min_value=1, max_value=60))
def test_backoff_matches_the_formula(attempt):
    """Where the float formula is safe it matches min(cap, base * 2**(attempt-1)) exactly."""
    policy = RetryPolicy()
    assert exponential_delay(policy, attempt) == min(4.0, 0.4 * 2 ** (attempt - 1))


def test_subnormal_base_reaches_the_cap():
    """Even the smallest positive base reaches the cap at a huge attempt number."""
    policy = RetryPolicy(base_delay_s=5e-324, max_delay_s=1.0)
    assert exponential_delay(policy, 10_000) == 1.0
    assert exponential_delay(policy, 10**18) == 1.0

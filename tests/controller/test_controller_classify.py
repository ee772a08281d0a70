import httpx
import pytest
from controller_fakes import WALL_EPOCH, argument_error, status_error, transport_error

from retrychaos.controller import Classifier, FailureKind, ToolSemantics

READ = ToolSemantics(side_effect=False)
SAFE_WRITE = ToolSemantics(side_effect=True, idempotency_key="k", idempotency_supported=True)
KEYLESS_WRITE = ToolSemantics(side_effect=True)
NO_DEDUP_WRITE = ToolSemantics(side_effect=True, idempotency_key="k", idempotency_supported=False)


def classify(error, semantics=READ):
    """Classify with a fresh classifier at the fake wall time."""
    return Classifier().classify(error, semantics, wall=WALL_EPOCH)


@pytest.mark.parametrize("cls", [httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout])
@pytest.mark.parametrize("semantics", [READ, SAFE_WRITE, KEYLESS_WRITE])
def test_never_sent_errors_are_transient_and_not_committed(cls, semantics):
    """Connect errors and connect/pool timeouts are transient: the request never left."""
    failure = classify(transport_error(cls), semantics)
    assert failure.kind is FailureKind.TRANSIENT
    assert failure.may_have_committed is False


@pytest.mark.parametrize(
    "cls",
    [
        httpx.ReadTimeout,
        httpx.WriteTimeout,
        httpx.ReadError,
        httpx.WriteError,
        httpx.RemoteProtocolError,
    ],
)
@pytest.mark.parametrize(
    ("semantics", "kind"),
    [
        (READ, FailureKind.TRANSIENT),
        (SAFE_WRITE, FailureKind.TRANSIENT),
        (KEYLESS_WRITE, FailureKind.UNKNOWN),
        (NO_DEDUP_WRITE, FailureKind.UNKNOWN),
    ],
)
def test_after_send_errors_depend_on_the_tools_semantics(cls, semantics, kind):
    """Errors after sending are transient only when repeating cannot double-commit."""
    failure = classify(transport_error(cls), semantics)
    assert failure.kind is kind
    assert failure.may_have_committed is True


@pytest.mark.parametrize(
    ("status", "kind", "committed"),
    [
        (408, FailureKind.TRANSIENT, False),
        (429, FailureKind.TRANSIENT, False),
        (503, FailureKind.TRANSIENT, False),
        (502, FailureKind.TRANSIENT, True),
        (504, FailureKind.TRANSIENT, True),
        (400, FailureKind.ARGUMENT, False),
        (422, FailureKind.ARGUMENT, False),
        (401, FailureKind.PERMANENT, False),
        (403, FailureKind.PERMANENT, False),
        (404, FailureKind.PERMANENT, False),
        (409, FailureKind.PERMANENT, False),
        (410, FailureKind.PERMANENT, False),
        (500, FailureKind.UNKNOWN, True),
        (501, FailureKind.UNKNOWN, True),
        (418, FailureKind.UNKNOWN, False),
    ],
)
def test_status_codes(status, kind, committed):
    """Each status maps to its kind; 5xx other than 503 may have committed."""
    failure = classify(status_error(status))
    assert (failure.kind, failure.status, failure.may_have_committed) == (kind, status, committed)
    assert failure.message == f"HTTP {status}"


def test_argument_error_carries_the_structured_body():
    """A 422 JSON body yields code, field, allowed values and retryable_by_model."""
    failure = classify(argument_error())
    assert failure.kind is FailureKind.ARGUMENT
    assert (failure.code, failure.field, failure.allowed, failure.retryable_by_model) == (
        "INVALID_DATE",
        "start_date",
        ["2026-01-01"],
        True,
    )
    assert failure.message == "HTTP 422: start_date is invalid"


def test_argument_error_with_a_flat_body():
    """A body without the `error` wrapper is read the same way."""
    failure = classify(status_error(400, json={"code": "TOO_LONG", "field": "title"}))
    assert (failure.code, failure.field, failure.retryable_by_model) == ("TOO_LONG", "title", None)


@pytest.mark.parametrize(
    "body",
    [b"<html>Bad Request</html>", b"\xff\xfe garbage", b"", b"[1, 2]", b'{"error": 5}'],
)
def test_argument_error_with_garbage_body_is_still_argument(body):
    """Non-JSON or oddly shaped bodies still give ARGUMENT, with code None."""
    failure = classify(status_error(400, content=body))
    assert failure.kind is FailureKind.ARGUMENT
    assert (failure.code, failure.field, failure.allowed) == (None, None, None)


def test_argument_body_of_wrong_types_is_ignored():
    """Fields of the wrong type are dropped rather than passed to the model."""
    failure = classify(
        status_error(422, json={"error": {"code": 7, "field": ["x"], "retryable_by_model": "y"}})
    )
    assert (failure.code, failure.field, failure.retryable_by_model) == (None, None, None)


def test_retry_after_is_read_from_the_response():
    """Retry-After on a 429 is parsed against the injected wall time."""
    failure = classify(status_error(429, headers={"Retry-After": "2"}))
    assert failure.retry_after_s == 2.0


@pytest.mark.parametrize("error", [ValueError("bad json"), RuntimeError(), KeyError("x")])
def test_unknown_exceptions_are_unknown(error):
    """Anything the rules do not cover is UNKNOWN and may have committed."""
    failure = classify(error)
    assert failure.kind is FailureKind.UNKNOWN
    assert failure.may_have_committed is True


def test_messages_name_the_exception_and_are_redacted():
    """The message is `Type: text`, with secrets stripped."""
    failure = classify(ValueError("rejected key sk-live-0123456789abcdef"))
    assert failure.message == "ValueError: rejected key [REDACTED]"
    assert classify(RuntimeError()).message == "RuntimeError"


def test_long_messages_are_shortened():
    """Messages are capped at 200 characters."""
    failure = classify(ValueError("x " * 300))
    assert len(failure.message) == 200
    assert failure.message.endswith("...")


class QuotaError(Exception):
    """A user's own exception type."""


def test_registered_type_mapping_wins():
    """A user mapping by exception type takes precedence over the built-in rules."""
    classifier = Classifier()
    classifier.register(QuotaError, FailureKind.PERMANENT, may_have_committed=False)
    classifier.register(httpx.ReadTimeout, FailureKind.PERMANENT)
    failure = classifier.classify(QuotaError("over quota"), READ, wall=WALL_EPOCH)
    assert (failure.kind, failure.may_have_committed) == (FailureKind.PERMANENT, False)
    timeout = classifier.classify(transport_error(httpx.ReadTimeout), READ, wall=WALL_EPOCH)
    assert timeout.kind is FailureKind.PERMANENT


def test_registered_predicate_and_newest_registration_wins():
    """Predicates work too, and a later registration overrides an earlier one."""
    classifier = Classifier()
    classifier.register(lambda e: "quota" in str(e), FailureKind.PERMANENT)
    classifier.register(lambda e: "retry later" in str(e), FailureKind.TRANSIENT)
    error = RuntimeError("quota: retry later")
    assert classifier.classify(error, READ, wall=WALL_EPOCH).kind is FailureKind.TRANSIENT
    assert (
        classifier.classify(RuntimeError("quota"), READ, wall=WALL_EPOCH).kind
        is FailureKind.PERMANENT
    )


def test_in_flight_409_is_transient():
    """409 IDEMPOTENCY_IN_FLIGHT (the first request still runs) is transient, not permanent."""
    body = {"error": {"code": "IDEMPOTENCY_IN_FLIGHT", "message": "in flight"}}
    failure = classify(status_error(409, json=body))
    assert (failure.kind, failure.status, failure.message) == (
        FailureKind.TRANSIENT,
        409,
        "HTTP 409: in flight",
    )


def test_other_409_codes_stay_permanent():
    """A 409 with any other code is a business conflict: permanent."""
    failure = classify(status_error(409, json={"error": {"code": "ALREADY_REFUNDED"}}))
    assert failure.kind is FailureKind.PERMANENT


def test_only_connect_failures_never_reached_the_server():
    """`reached` is False for connect errors and timeouts, True for anything sent."""
    reached = [
        classify(error).reached
        for error in (
            transport_error(httpx.ConnectError),
            transport_error(httpx.ConnectTimeout),
            transport_error(httpx.ReadTimeout),
            status_error(503),
        )
    ]
    assert reached == [False, False, True, True]


@pytest.mark.parametrize("body", [{"message": 42}, {"message": ""}, {"message": ["x"]}])
def test_only_a_non_empty_text_message_of_the_server_is_quoted(body):
    """A server message that is empty or not text leaves the description at the status."""
    assert classify(status_error(500, json=body)).message == "HTTP 500"


def test_registered_mapping_may_have_committed_unless_told_otherwise():
    """A user rule that says nothing about commitment assumes the attempt may have landed."""
    classifier = Classifier()
    classifier.register(QuotaError, FailureKind.TRANSIENT)
    failure = classifier.classify(QuotaError("over quota"), KEYLESS_WRITE, wall=WALL_EPOCH)
    assert (failure.kind, failure.may_have_committed) == (FailureKind.TRANSIENT, True)


def test_registered_mapping_describes_the_error_and_reads_its_retry_after():
    """A user rule decides the kind; the message and the server's Retry-After are still read."""
    classifier = Classifier()
    classifier.register(httpx.HTTPStatusError, FailureKind.TRANSIENT)
    error = status_error(500, headers={"Retry-After": "3"})
    failure = classifier.classify(error, READ, wall=WALL_EPOCH)
    assert (failure.kind, failure.message, failure.retry_after_s) == (
        FailureKind.TRANSIENT,
        "HTTPStatusError: HTTP 500",
        3.0,
    )


def test_a_plain_text_error_field_is_the_servers_message():
    """A body like {"error": "quota exceeded"} gives its text as the server's message."""
    failure = classify(status_error(503, json={"error": "quota exceeded"}))
    assert failure.message == "HTTP 503: quota exceeded"


def test_registered_mapping_measures_an_http_date_against_the_wall_clock():
    """A user rule's failure still turns an HTTP-date Retry-After into seconds from `wall`."""
    classifier = Classifier()
    classifier.register(httpx.HTTPStatusError, FailureKind.TRANSIENT)
    error = status_error(500, headers={"Retry-After": "Mon, 21 Sep 2026 14:13:25 GMT"})
    assert classifier.classify(error, READ, wall=WALL_EPOCH).retry_after_s == 5.0


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (transport_error(httpx.ConnectError, "refused"), "ConnectError: refused"),
        (transport_error(httpx.ReadTimeout, "timed out"), "ReadTimeout: timed out"),
        (RuntimeError("odd"), "RuntimeError: odd"),
    ],
)
def test_every_branch_describes_the_exception(error, message):
    """Never-sent, sent-then-lost and unclassifiable errors each carry their own description."""
    assert classify(error).message == message


def test_a_message_of_exactly_the_limit_is_kept_whole():
    """A description of 200 characters is not shortened; one more and it is."""
    text = "x " * 93
    assert classify(RuntimeError(text)).message == f"RuntimeError: {text}"
    assert classify(RuntimeError(text + "y")).message == f"RuntimeError: {text[:183]}..."

"""retrychaos's reference retry controller for agent tool calls.

Classify the failure, respect idempotency, share one budget across every
layer, back off with jitter inside the deadline, break circuits per tool and
audit every attempt. See README.md in this folder.
"""

from .audit import (
    AUDIT_FIELDS,
    AuditSink,
    CallableAuditSink,
    JsonLinesAuditSink,
    LoggingAuditSink,
    MemoryAuditSink,
)
from .backoff import backoff_delay, exponential_delay
from .breaker import (
    BreakerConfig,
    BreakerState,
    BreakerTransition,
    CircuitBreaker,
)
from .budget import BudgetState, Gate, TaskBudget
from .classify import Classifier, Failure
from .clock import Clock, SyncClock, SystemClock, SystemSyncClock
from .context import CallContext, CallContextLike
from .controller import (
    AsyncTool,
    ReferenceController,
    SyncReferenceController,
    SyncTool,
)
from .decision import (
    Decision,
    Final,
    Prior,
    Retry,
    Standing,
    decide,
    readmit,
    standing,
)
from .errors import (
    BudgetExhausted,
    ConfigurationError,
    ControllerError,
    IdempotencyConflict,
    LedgerError,
)
from .httpx_layer import (
    AsyncBudgetTransport,
    BudgetTransport,
    async_budget_event_hooks,
    budget_event_hooks,
    http_tool,
    sync_http_tool,
)
from .idempotency import fingerprint, key_digest, operation_key
from .kinds import FailureKind, ToolSemantics, Verdict
from .ledger import (
    DEFAULT_LEDGER_PATH,
    IdempotencyLedger,
    LedgerStore,
    MemoryLedgerStore,
    SqliteLedgerStore,
)
from .metrics import Metrics, MetricsSnapshot
from .plugin import reference, reference_sync
from .policy import RetryPolicy
from .redact import redact
from .retry_after import parse_retry_after

__all__ = [
    "AUDIT_FIELDS",
    "DEFAULT_LEDGER_PATH",
    "AsyncBudgetTransport",
    "AsyncTool",
    "AuditSink",
    "BreakerConfig",
    "BreakerState",
    "BreakerTransition",
    "BudgetExhausted",
    "BudgetState",
    "BudgetTransport",
    "CallContext",
    "CallContextLike",
    "CallableAuditSink",
    "CircuitBreaker",
    "Classifier",
    "Clock",
    "ConfigurationError",
    "ControllerError",
    "Decision",
    "Failure",
    "FailureKind",
    "Final",
    "Gate",
    "IdempotencyConflict",
    "IdempotencyLedger",
    "JsonLinesAuditSink",
    "LedgerError",
    "LedgerStore",
    "LoggingAuditSink",
    "MemoryAuditSink",
    "MemoryLedgerStore",
    "Metrics",
    "MetricsSnapshot",
    "Prior",
    "ReferenceController",
    "Retry",
    "RetryPolicy",
    "SqliteLedgerStore",
    "Standing",
    "SyncClock",
    "SyncReferenceController",
    "SyncTool",
    "SystemClock",
    "SystemSyncClock",
    "TaskBudget",
    "ToolSemantics",
    "Verdict",
    "async_budget_event_hooks",
    "backoff_delay",
    "budget_event_hooks",
    "decide",
    "exponential_delay",
    "fingerprint",
    "http_tool",
    "key_digest",
    "operation_key",
    "parse_retry_after",
    "readmit",
    "redact",
    "reference",
    "reference_sync",
    "standing",
    "sync_http_tool",
]

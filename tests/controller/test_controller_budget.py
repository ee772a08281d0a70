import asyncio
import random
import threading

import httpx
import pytest
from controller_fakes import FakeClock, ScriptedTool, ctx, status_error, transport_error

from retrychaos.controller import (
    AsyncBudgetTransport,
    BudgetExhausted,
    MemoryAuditSink,
    ReferenceController,
    RetryPolicy,
    TaskBudget,
)
from retrychaos.controller.budget import BudgetBook, charge_current_request

# Room for three re-plans: only the task budget (5) should bind.
LAYERED = RetryPolicy(max_attempts_per_task=5, max_attempts_per_tool=10, max_attempts_per_call=3)


def test_task_budget_counts_every_tool(clock):
    """At most N attempts per task, all tools together."""
    budget = TaskBudget(policy=RetryPolicy(), clock=clock)
    results = [budget.charge(tool) for tool in ["a", "a", "b", "b", "c"]]
    assert results == [None] * 5
    refusal = budget.charge("d")
    assert refusal is not None
    assert (refusal.verdict.value, refusal.message) == (
        "budget_exhausted",
        "task budget spent: 5 of 5 attempts",
    )
    assert budget.attempts == 5


def test_tool_budget_is_per_tool_within_the_task(clock):
    """At most M attempts per tool within one task."""
    budget = TaskBudget(policy=RetryPolicy(), clock=clock)
    assert [budget.charge("a") for _ in range(3)] == [None] * 3
    refusal = budget.charge("a")
    assert refusal is not None
    assert refusal.message == "tool budget spent: 3 of 3 attempts on 'a'"
    assert budget.charge("b") is None


def test_call_budget_is_per_operation_within_the_task(clock):
    """At most max_attempts_per_call attempts per operation; other operations of the tool go on."""
    policy = RetryPolicy(max_attempts_per_tool=5)
    budget = TaskBudget(policy=policy, clock=clock)
    assert [budget.charge("a", "op-1") for _ in range(3)] == [None] * 3
    refusal = budget.charge("a", "op-1")
    assert refusal is not None
    assert (refusal.verdict.value, refusal.message) == (
        "budget_exhausted",
        "call budget spent: 3 of 3 attempts on this operation of 'a'",
    )
    assert budget.charge("a", "op-2") is None
    assert (budget.operation_attempts("a", "op-1"), budget.operation_attempts("a", "op-2")) == (
        3,
        1,
    )
    assert budget.state("a", "op-1").operation_attempts == 3
    assert budget.state("a").operation_attempts == 0


def test_deadline_runs_from_the_first_attempt(clock):
    """Without an explicit deadline the task has max_elapsed_s from its first attempt."""
    budget = TaskBudget(policy=RetryPolicy(), clock=clock)
    clock.advance(100)
    assert budget.charge("a") is None
    assert budget.deadline == 108.0
    clock.advance(8)
    refusal = budget.charge("a")
    assert refusal is not None
    assert (refusal.verdict.value, refusal.message) == (
        "deadline_exceeded",
        "task deadline passed 0.000 s ago",
    )


def test_explicit_deadline_wins(clock):
    """A caller's absolute deadline replaces the elapsed-time one."""
    budget = TaskBudget(policy=RetryPolicy(), clock=clock, deadline=2.0)
    assert budget.state("a").deadline == 2.0


def test_plain_gate_charges_the_budget(clock):
    """`gate(attempt, error)` charges one attempt and says False once the budget is spent."""
    budget = TaskBudget(policy=RetryPolicy(), clock=clock)
    gate = budget.gate("a")
    assert [gate(n, None) for n in range(2, 6)] == [True, True, True, False]
    assert budget.attempts == 3


def test_budget_is_thread_safe(clock):
    """Charges from many threads never exceed the limit."""
    policy = RetryPolicy(max_attempts_per_task=500, max_attempts_per_tool=500)
    budget = TaskBudget(policy=policy, clock=clock)
    granted = []

    def worker():
        granted.extend(1 for _ in range(200) if budget.charge("a") is None)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(granted) == 500
    assert budget.attempts == 500


def test_budget_is_safe_for_many_coroutines(clock):
    """100 concurrent calls (100 operations) of one task reach the tool at most 5 times in total."""
    tool = ScriptedTool(script=[status_error(503)] * 1000)
    ctl = ReferenceController(clock=clock, rng=random.Random(0), policy=LAYERED)

    async def main():
        calls = (ctl.call(tool, {"i": i}, ctx(call_id=f"c{i}")) for i in range(100))
        return await asyncio.gather(*calls)

    results = asyncio.run(main())
    assert len(tool.calls) == 5
    assert {r["decision"] for r in results} <= {"budget_exhausted", "circuit_open"}


class Server:
    """A service that always answers 503 and counts what reaches it."""

    def __init__(self):
        """Start with no request received."""
        self.requests = 0

    def hit(self):
        """Receive one request and fail it."""
        self.requests += 1
        raise status_error(503)


def sdk_tool(server, clock):
    """An SDK-like client with its own 3 tries, asking the gate before each extra one."""

    async def tool(args, *, idempotency_key=None, gate=None):
        attempt = 1
        while True:
            try:
                return server.hit()
            except httpx.HTTPStatusError as error:
                if attempt >= 3 or (gate is not None and not gate(attempt + 1, error)):
                    raise
                attempt += 1
                await clock.sleep(0.01)

    return tool


async def model_loop(ctl, tool, replans=3):
    """A stubborn model re-planning the same operation: same task, same key, new call id."""
    results = []
    for plan in range(replans):
        context = ctx(
            task_id="task-27",
            call_id=f"call-{plan}",
            tool="search",
            idempotency_key="op-1",
            deadline=8.0,
        )
        results.append(await ctl.call(tool, {"q": "x"}, context))
    return results


def test_three_naive_layers_make_27_requests():
    """Without a shared budget: 3 re-plans x 3 retries x 3 SDK tries = 27 requests."""
    clock, server = FakeClock(), Server()
    tool = sdk_tool(server, clock)

    async def naive():
        for _plan in range(3):
            for _retry in range(3):
                try:
                    await tool({"q": "x"})
                except httpx.HTTPStatusError:
                    continue

    asyncio.run(naive())
    assert server.requests == 27


def test_shared_budget_holds_across_three_nested_layers():
    """Model re-plans x controller x SDK retries of one operation: at most 3 requests, not 27."""
    clock, server, sink = FakeClock(), Server(), MemoryAuditSink()
    ctl = ReferenceController(clock=clock, rng=random.Random(3), policy=LAYERED, audit_sinks=[sink])
    results = asyncio.run(model_loop(ctl, sdk_tool(server, clock)))
    assert server.requests == 3
    attempts = [r for r in sink.records if r["event"] == "attempt"]
    assert [(r["call_id"], r["attempt"], r["layer"]) for r in attempts] == [
        ("call-0", 1, "gate"),
        ("call-0", 2, "gate"),
        ("call-0", 3, "controller"),
    ]
    assert ctl.budget_for("task-27").attempts == 3
    assert [(r["decision"], r["attempts"]) for r in results] == [("budget_exhausted", 3)] + [
        ("budget_exhausted", 0)
    ] * 2
    assert (
        results[-1]["error"] == "call budget spent: 3 of 3 attempts on this operation of 'search'"
    )


def test_task_budget_caps_layers_across_operations():
    """Three operations of one task, each with SDK retries under the gate: 5 requests in all."""
    clock, server = FakeClock(), Server()
    ctl = ReferenceController(clock=clock, rng=random.Random(3), policy=LAYERED)
    tool = sdk_tool(server, clock)

    async def main():
        return [
            await ctl.call(tool, {"q": n}, ctx(task_id="t", call_id=f"c{n}", deadline=8.0))
            for n in range(3)
        ]

    results = asyncio.run(main())
    assert server.requests == 5
    assert [r["attempts"] for r in results] == [3, 2, 0]
    assert results[-1]["error"] == "task budget spent: 5 of 5 attempts"


def test_replans_after_the_budget_is_spent_make_no_attempt(clock):
    """Once the operation's budget is spent, a re-planned call returns budget_exhausted untried."""
    tool = ScriptedTool(script=[status_error(503)] * 20)
    ctl = ReferenceController(clock=clock, rng=random.Random(0), policy=LAYERED)
    results = asyncio.run(model_loop(ctl, tool, replans=4))
    assert len(tool.calls) == 3
    assert [r["attempts"] for r in results] == [3, 0, 0, 0]


def test_gate_refuses_unprotected_side_effects(clock):
    """The controller's gate never lets a lower layer repeat a keyless side effect."""
    server = Server()
    ctl = ReferenceController(clock=clock, rng=random.Random(0))

    answers = []

    async def tool(args, *, idempotency_key=None, gate=None):
        try:
            return server.hit()
        except httpx.HTTPStatusError as error:
            answers.append(gate(2, error))
            raise

    result = asyncio.run(ctl.call(tool, {}, ctx(side_effect=True)))
    assert server.requests == 1
    assert answers == [False]
    assert result["decision"] == "stop"
    assert ctl.budget_for("task-1").attempts == 1


def test_gate_refuses_permanent_errors(clock):
    """The gate says no to retrying a 401 even with budget left."""
    ctl = ReferenceController(clock=clock, rng=random.Random(0))
    answers = []

    async def tool(args, *, idempotency_key=None, gate=None):
        error = status_error(401)
        answers.append(gate(2, error))
        raise error

    result = asyncio.run(ctl.call(tool, {}, ctx()))
    assert answers == [False]
    assert result["decision"] == "stop"


def test_gate_without_an_error_checks_the_call_limit(clock):
    """A gate call without an exception still respects the per-call attempt limit."""
    ctl = ReferenceController(clock=clock, rng=random.Random(0))
    answers = []

    async def tool(args, *, idempotency_key=None, gate=None):
        answers.extend(gate(n, None) for n in range(2, 5))
        return "ok"

    assert asyncio.run(ctl.call(tool, {}, ctx())) == "ok"
    assert answers == [True, True, False]


class RetryingTransport(httpx.AsyncBaseTransport):
    """A retry layer that never asks anyone: retries 503s up to 9 times."""

    def __init__(self, inner):
        """Wrap `inner`."""
        self.inner = inner

    async def handle_async_request(self, request):
        """Send, and resend on 503."""
        for _ in range(9):
            response = await self.inner.handle_async_request(request)
            if response.status_code != 503:
                return response
        return response


def test_budget_transport_caps_a_retry_layer_nobody_announced(clock):
    """An httpx retry transport over AsyncBudgetTransport cannot exceed the task budget."""
    reached = []

    def handler(request):
        reached.append(request)
        return httpx.Response(503)

    transport = RetryingTransport(AsyncBudgetTransport(httpx.MockTransport(handler)))
    ctl = ReferenceController(clock=clock, rng=random.Random(0), policy=LAYERED)

    async def main():
        async with httpx.AsyncClient(transport=transport, base_url="https://tool.test") as client:

            async def tool(args, *, idempotency_key=None, gate=None):
                response = await client.post("/op", json=args)
                response.raise_for_status()
                return response.json()

            return await model_loop(ctl, tool)

    results = asyncio.run(main())
    assert len(reached) == 3
    assert results[0]["decision"] == "budget_exhausted"
    assert results[0]["error"] == (
        "request refused by the HTTP layer: call budget spent: 3 of 3 attempts "
        "on this operation of 'search'"
    )


def test_budget_transport_outside_a_call_charges_its_fixed_budget(clock):
    """Outside a controlled call the transport charges the budget it was given."""
    budget = TaskBudget(policy=RetryPolicy(max_attempts_per_tool=2), clock=clock)
    transport = AsyncBudgetTransport(
        httpx.MockTransport(lambda _: httpx.Response(200)), budget=budget, tool="t"
    )

    async def main():
        async with httpx.AsyncClient(transport=transport) as client:
            await client.get("https://tool.test/")
            await client.get("https://tool.test/")
            with pytest.raises(BudgetExhausted) as caught:
                await client.get("https://tool.test/")
            return caught.value

    error = asyncio.run(main())
    assert (
        str(error) == "request refused by the HTTP layer: tool budget spent: 2 of 2 attempts on 't'"
    )
    assert error.verdict == "budget_exhausted"


def test_transport_and_gate_pay_each_request_once(clock):
    """A gate-approved SDK retry that goes through the budget transport is charged once."""
    reached = []

    def handler(request):
        reached.append(request)
        return httpx.Response(503 if len(reached) < 3 else 200, json={"n": len(reached)})

    ctl = ReferenceController(clock=clock, rng=random.Random(0), policy=LAYERED)

    async def main():
        transport = AsyncBudgetTransport(httpx.MockTransport(handler))
        async with httpx.AsyncClient(transport=transport) as client:

            async def tool(args, *, idempotency_key=None, gate=None):
                attempt = 1
                while True:
                    response = await client.get("https://tool.test/")
                    try:
                        response.raise_for_status()
                    except httpx.HTTPStatusError as error:
                        if not gate(attempt + 1, error):
                            raise
                        attempt += 1
                        continue
                    return response.json()

            return await ctl.call(tool, {}, ctx(task_id="paid-once"))

    assert asyncio.run(main()) == {"n": 3}
    assert ctl.budget_for("paid-once").attempts == 3


def test_unknown_outcome_errors_do_not_pass_the_gate_for_side_effects(clock):
    """A read timeout under a keyed, deduplicated side effect is retried by the lower layer."""
    ctl = ReferenceController(clock=clock, rng=random.Random(0))
    answers = []

    async def tool(args, *, idempotency_key=None, gate=None):
        answers.append(gate(2, transport_error(httpx.ReadTimeout)))
        return "ok"

    context = ctx(side_effect=True, idempotency_key="k", idempotency_supported=True)
    assert asyncio.run(ctl.call(tool, {}, context)) == "ok"
    assert answers == [True]


def test_plain_gate_charges_the_operation_it_was_made_for(clock):
    """A gate for one operation spends that operation's call budget, not only the task's."""
    budget = TaskBudget(policy=LAYERED, clock=clock)
    gate = budget.gate("a", "op-1")
    assert [gate(n, None) for n in range(2, 6)] == [True, True, True, False]
    assert budget.operation_attempts("a", "op-1") == 3
    assert budget.check("a", "op-2") is None


def test_forgetting_a_task_drops_its_budget_and_unknown_tasks_are_ignored(clock):
    """After forget(task) the book starts that task afresh; forgetting a stranger is a no-op."""
    book = BudgetBook(policy=RetryPolicy(), clock=clock)
    first = book.for_task("t1")
    first.charge("a")
    book.for_task("t2")
    book.forget("t1")
    book.forget("never-seen")
    assert len(book) == 1
    assert book.for_task("t1") is not first
    assert book.for_task("t1").attempts == 0


def test_a_request_outside_any_attempt_charges_the_fallback_budget(clock):
    """With no attempt scope, charge_current_request charges the fallback (tool '' by default)."""
    budget = TaskBudget(policy=RetryPolicy(max_attempts_per_tool=1), clock=clock)
    assert charge_current_request(budget) is None
    assert budget.state("").tool_attempts == 1
    refusal = charge_current_request(budget)
    assert refusal is not None
    assert refusal.message == "tool budget spent: 1 of 1 attempts on ''"
    assert charge_current_request() is None


def test_an_unused_budget_reports_a_deadline_from_now(clock):
    """Before any attempt, the snapshot's deadline runs from the present moment."""
    clock.t = 2.0
    budget = TaskBudget(policy=RetryPolicy(max_elapsed_s=8.0), clock=clock)
    assert budget.state("a").deadline == 10.0


def test_check_judges_the_operation_it_is_asked_about(clock):
    """check(tool, operation) refuses a spent operation without charging, and only that one."""
    budget = TaskBudget(policy=LAYERED, clock=clock)
    for _ in range(3):
        budget.charge("a", "op-1")
    refusal = budget.check("a", "op-1")
    assert refusal is not None
    assert refusal.message == "call budget spent: 3 of 3 attempts on this operation of 'a'"
    assert budget.check("a", "op-2") is None
    assert budget.attempts == 3


def test_a_paid_attempt_scope_ends_with_its_block(clock):
    """Inside paid_attempt a request spends the prepaid credit; after it, the fallback pays."""
    budget = TaskBudget(policy=LAYERED, clock=clock)
    fallback = TaskBudget(policy=LAYERED, clock=clock)
    with budget.paid_attempt("a"):
        assert charge_current_request(fallback, "a") is None
    assert (budget.attempts, fallback.attempts) == (0, 0)
    assert charge_current_request(fallback, "a") is None
    assert (budget.attempts, fallback.attempts) == (0, 1)

# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""The JSON Schema, the models behind it and the invariant ids."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin

from retrychaos.scenario import INVARIANT_DEFINITIONS, INVARIANT_IDS, json_schema
from retrychaos.scenario._fields import Expect
from retrychaos.scenario.faults import FAULT_MODELS, RetryAfterModel
from retrychaos.scenario.schema import (
    CallModel,
    ContractModel,
    ExpectModel,
    RateLimitModel,
    ScenarioFile,
    ToolModel,
    WorkloadModel,
)
from retrychaos.world.spec import FaultType

if TYPE_CHECKING:
    from pydantic import BaseModel

MODELS: tuple[type[BaseModel], ...] = (
    ScenarioFile,
    ContractModel,
    ToolModel,
    RateLimitModel,
    RetryAfterModel,
    WorkloadModel,
    CallModel,
    ExpectModel,
    *FAULT_MODELS,
)


def test_top_level_properties() -> None:
    """The schema lists every top-level key and requires the four without defaults."""
    schema = json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "retrychaos scenario"
    assert list(schema["properties"]) == [
        "name",
        "description",
        "contract",
        "tools",
        "workload",
        "invariants",
        "must_happen",
        "expect",
        "seeds",
        "transport",
        "protocol",
        "timezone",
        "start_time",
    ]
    assert schema["required"] == ["name", "description", "tools", "workload"]
    assert schema["additionalProperties"] is False
    json.dumps(schema)  # serialisable as is


def test_every_field_described() -> None:
    """Every property of every model has a title and a description for editors."""
    schema = json_schema()
    definitions: dict[str, Any] = {"<top>": schema, **schema["$defs"]}
    models = {name: d for name, d in definitions.items() if "properties" in d}
    assert len(models) == len(MODELS)  # the rest is pydantic's own JsonValue
    for name, definition in models.items():
        assert definition.get("description"), name
        for key, prop in definition.get("properties", {}).items():
            assert prop.get("title"), (name, key)
            assert prop.get("description"), (name, key)


def test_every_field_says_what_it_expects() -> None:
    """Every field carries the Expect text its error messages use."""
    for model in MODELS:
        for key, info in model.model_fields.items():
            if key == "fault":
                continue  # the tag's message lists the kinds
            assert any(isinstance(item, Expect) for item in info.metadata), (model, key)


def test_fault_models_cover_fault_types() -> None:
    """Each FaultType is the tag of exactly one fault model."""
    tags = [
        tag
        for model in FAULT_MODELS
        for tag in get_args(model.model_fields["fault"].annotation)
        if get_origin(model.model_fields["fault"].annotation) is Literal
    ]
    assert sorted(tags) == sorted(kind.value for kind in FaultType)


def test_invariant_ids() -> None:
    """The invariant ids are the fourteen of the catalogue, each with a one-line definition."""
    assert INVARIANT_IDS == (
        "no_request_amplification",
        "no_duplicate_side_effects",
        "deadline_adherence",
        "retry_after_respected",
        "no_retry_on_permanent",
        "argument_errors_to_model",
        "unknown_retried_at_most_once",
        "unsafe_side_effects_not_replayed",
        "idempotency_key_stable",
        "backoff_bounded_and_jittered",
        "breaker_sheds_load",
        "succeeds_when_possible",
        "honest_outcomes",
        "audit_complete_and_redacted",
    )
    assert all(text and "\n" not in text for text in INVARIANT_DEFINITIONS.values())


def test_schema_lists_invariant_ids() -> None:
    """Editors can complete invariant ids from the schema."""
    invariants = json_schema()["properties"]["invariants"]
    array = next(option for option in invariants["anyOf"] if option.get("type") == "array")
    assert array["items"]["enum"] == list(INVARIANT_IDS)

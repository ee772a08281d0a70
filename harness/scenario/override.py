"""Judging a library alone: ``run --model obedient --no-sdk-layer``.

A scenario judges a whole stack: the simulated model above the controller
(``workload.model``, a stubborn one re-plans after every error) and the SDK
layer under the tool (``workload.sdk_retries``). To judge a retry library
alone, :class:`StackOverride` replaces the model's policy and removes the SDK
layer in every selected scenario.

An overridden scenario carries the override in its name (``burst-503-clears
+model-obedient+no-sdk``): scenario names are ``a-z``, ``0-9`` and ``-`` only,
so the suffix cannot be mistaken for part of a name, every case id, trace
file and report says the verdict is not the stack's, and the replay command
gives the override back as flags (:func:`replay_words`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..world.spec import ModelPolicy

if TYPE_CHECKING:
    from ..world.spec import Scenario

__all__ = ["LIBRARY_ALONE", "StackOverride", "replay_words", "split_name"]

_MODEL = "+model-"
_NO_SDK = "+no-sdk"


@dataclass(frozen=True, slots=True, kw_only=True)
class StackOverride:
    """What to replace in each scenario's stack: the model's policy, the SDK layer."""

    model: ModelPolicy | None = None
    """The model policy every scenario gets (None: each keeps its own)."""
    no_sdk_layer: bool = False
    """Remove the SDK layer under the tools (``sdk_retries`` 0)."""

    def __bool__(self) -> bool:
        """Whether the override changes anything."""
        return self.model is not None or self.no_sdk_layer

    @property
    def suffix(self) -> str:
        """The mark an overridden scenario's name ends with (empty for no override)."""
        model = "" if self.model is None else _MODEL + self.model.value.replace("_", "-")
        return model + (_NO_SDK if self.no_sdk_layer else "")

    @property
    def flags(self) -> list[str]:
        """The command-line words that ask for this override."""
        model = [] if self.model is None else ["--model", self.model.value]
        return model + (["--no-sdk-layer"] if self.no_sdk_layer else [])

    def describe(self) -> str:
        """Say the override in words: ``model obedient, no SDK layer``."""
        parts = [] if self.model is None else [f"model {self.model.value}"]
        return ", ".join(parts + (["no SDK layer"] if self.no_sdk_layer else []))

    def apply(self, scenario: Scenario) -> Scenario:
        """Return ``scenario`` with the override applied and said in its name."""
        if not self:
            return scenario
        workload = scenario.workload
        changed = replace(
            workload,
            model=workload.model if self.model is None else self.model,
            sdk_retries=0 if self.no_sdk_layer else workload.sdk_retries,
        )
        return replace(scenario, name=scenario.name + self.suffix, workload=changed)


LIBRARY_ALONE = StackOverride(model=ModelPolicy.OBEDIENT, no_sdk_layer=True)
"""The library-alone override: an obedient model and no SDK layer."""

_POLICIES = {policy.value.replace("_", "-"): policy for policy in ModelPolicy}


def split_name(name: str) -> tuple[str, StackOverride]:
    """Split an overridden scenario's name into the scenario's own name and the override."""
    no_sdk = name.endswith(_NO_SDK)
    if no_sdk:
        name = name.removesuffix(_NO_SDK)
    model = None
    head, found, policy = name.rpartition(_MODEL)
    if found and policy in _POLICIES:
        name, model = head, _POLICIES[policy]
    return name, StackOverride(model=model, no_sdk_layer=no_sdk)


def replay_words(name: str) -> list[str]:
    """The replay command's words for a scenario name: ``--scenario NAME`` and any override."""
    base, override = split_name(name)
    return ["--scenario", base, *override.flags]

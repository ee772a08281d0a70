# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""The stable ids of the invariants a scenario can ask for, with one-line definitions.

The ids are public and stable: scenario files, reports and users' CI name them.
Both names are read from the invariant registry
(:data:`retrychaos.invariants.registry.ALL`), the one source of the catalogue:
the ids in catalogue order, each with its invariant's own ``summary``. The
registry's import chain (the checkers, the metrics, the world's value types)
never reaches this package, so the import has no cycle; a test imports this
package first, on its own, to keep it that way.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from ..invariants.registry import ALL

__all__ = ["INVARIANT_DEFINITIONS", "INVARIANT_IDS"]

INVARIANT_DEFINITIONS: Final = MappingProxyType(
    {invariant.id: invariant.summary for invariant in ALL}
)
"""Invariant id -> what must hold, in one line (the invariant's ``summary``)."""

INVARIANT_IDS: Final[tuple[str, ...]] = tuple(INVARIANT_DEFINITIONS)
"""Every invariant id, in catalogue order (see docs/invariants.md)."""

# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""The scenario file format: YAML in, ``retrychaos.world.spec.Scenario`` out, and back."""

from .dump import dump_scenario, write_scenario
from .errors import MISSING, ScenarioError
from .ids import INVARIANT_DEFINITIONS, INVARIANT_IDS
from .load import load_paths, load_scenario, scenario_from_dict, scenario_from_yaml
from .schema import json_schema

__all__ = [
    "INVARIANT_DEFINITIONS",
    "INVARIANT_IDS",
    "MISSING",
    "ScenarioError",
    "dump_scenario",
    "json_schema",
    "load_paths",
    "load_scenario",
    "scenario_from_dict",
    "scenario_from_yaml",
    "write_scenario",
]

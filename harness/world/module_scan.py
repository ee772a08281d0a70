"""Which loaded modules hold the real time functions, found cheaply run after run.

A run (:mod:`retrychaos.world.timepatch`) swaps every module's reference to
a real time function (``from time import monotonic``) for its face, as
freezegun's ``start()`` does; this is the walk over ``sys.modules`` that
finds them, kept from run to run and read again only where something changed.
"""

from __future__ import annotations

import itertools
import sys
from operator import is_
from types import ModuleType
from typing import Any

import freezegun.api as fz

__all__ = ["SCAN", "ModuleScan", "chosen", "time_attributes"]

_REAL_IDS = fz._real_time_object_ids  # noqa: SLF001
_SKIPPED_MODULES = ("datetime", "time")
_NONE = itertools.repeat(None)
"""``next``'s default for each dict in :meth:`ModuleScan.refresh` (an empty one: no last name)."""


def chosen(name: str, module: Any, ignore: tuple[str, ...]) -> bool:
    """Whether freezegun's ``start()`` would patch this loaded module."""
    if module is None or name == fz.__name__:
        return False
    if name.startswith(ignore) or name.endswith(".six.moves"):
        return False
    return hasattr(module, "__name__") and module.__name__ not in _SKIPPED_MODULES


def time_attributes(names: dict[str, Any]) -> list[tuple[str, Any]] | None:
    """The items of a module's ``__dict__`` that hold real time functions, or None.

    For a plain module that is what freezegun's ``getattr`` of each name of
    its ``dir()`` finds; for one with its own ``__getattr__`` the dict keeps
    it lazy (freezegun's way imports all it lists: ``retrychaos``'s exports
    are some 170 modules, 0.4 s of CPU), and what is not loaded yet is a
    reference nobody holds. None for a module with only its own ``__dir__``:
    freezegun's own check reads it, in every run.
    """
    if "__getattr__" not in names and "__dir__" in names:
        return None
    return [(name, value) for name, value in list(names.items()) if id(value) in _REAL_IDS]


class ModuleScan:
    """What the last entry found in ``sys.modules``, for the next to check cheaply.

    Modules are chosen again when ``sys.modules`` holds other names, objects
    or types, or freezegun's ignore list changed. A plain module is read
    again when its count of names or its last name changed (two lists made
    and compared in C: 0.1 ms for 1,100 modules and 40,000 names, where
    their tuples of names cost 1-3 ms, a third of a one-call run): a name
    bound is appended, so a new name, one deleted and one deleted and bound
    again (freezegun's check, by the set of names, misses it) are all seen,
    or when a time function it held was replaced (freezegun would lose the
    new value). Not seen, as by freezegun: a name rebound to a time
    function, its names the same; nor a reordering that keeps their count
    and the last one (two names deleted and bound again, the last one
    last). Any other module gets freezegun's own check, in every run.
    """

    __slots__ = (
        *("dicts", "fixed", "found", "ignore", "lasts", "modules"),
        *("names", "objects", "others", "plan", "sizes", "types"),
    )

    def __init__(self) -> None:
        """Nothing scanned yet: the first refresh walks every module."""
        self.names: tuple[str, ...] = ()
        self.objects: tuple[Any, ...] = ()
        self.types: tuple[type, ...] = ()
        self.ignore: tuple[str, ...] = ()
        self.modules: list[ModuleType] = []
        self.dicts: list[dict[str, Any]] = []
        self.sizes: list[int] = []
        self.lasts: list[Any] = []  # each dict's last name (None: an empty dict)
        self.found: list[list[tuple[str, Any]] | None] = []
        self.fixed: list[Any] = []
        self.others: list[Any] = []
        self.plan: list[tuple[ModuleType, str, Any, dict[str, Any], int]] = []

    def refresh(self, ignore: tuple[str, ...]) -> tuple[list[Any], list[Any]]:
        """The references to patch (module, name, real, ...); the modules freezegun reads."""
        modules = sys.modules
        names, objects = tuple(modules), tuple(modules.values())
        if (
            names != self.names
            or ignore != self.ignore
            or not all(map(is_, objects, self.objects))
            or not all(map(is_, map(type, objects), self.types))
        ):
            self._walk(names, objects, ignore)
        else:
            dicts = self.dicts
            sizes, lasts = list(map(len, dicts)), list(map(next, map(reversed, dicts), _NONE))
            if sizes != self.sizes or lasts != self.lasts:
                pairs = zip(sizes, lasts, self.sizes, self.lasts, strict=True)
                for index, (size, last, size_was, last_was) in enumerate(pairs):
                    if size != size_was or last != last_was:
                        self.found[index] = time_attributes(dicts[index])
                self.sizes, self.lasts = sizes, lasts
                self._plan()
        stale = {index for _m, name, real, own, index in self.plan if own.get(name) is not real}
        for index in stale:
            self.found[index] = time_attributes(self.dicts[index])
        if stale:
            self._plan()
        return self.plan, self.others

    def _walk(
        self, names: tuple[str, ...], objects: tuple[Any, ...], ignore: tuple[str, ...]
    ) -> None:
        """Choose the modules again; read those that are new or whose names changed."""
        signatures = zip(self.sizes, self.lasts, strict=True)
        known = dict(
            zip(map(id, self.modules), zip(signatures, self.found, strict=True), strict=True)
        )
        self.modules, self.dicts, self.found, self.fixed = [], [], [], []
        self.sizes, self.lasts = [], []
        types = tuple(map(type, objects))
        for name, module, kind in zip(names, objects, types, strict=True):
            if not chosen(name, module, ignore):
                continue
            if kind is not ModuleType:
                self.fixed.append(module)
                continue
            own = module.__dict__
            signature = (len(own), next(reversed(own), None))
            seen = known.get(id(module))
            self.modules.append(module)
            self.dicts.append(own)
            self.sizes.append(signature[0])
            self.lasts.append(signature[1])
            self.found.append(seen[1] if seen and seen[0] == signature else time_attributes(own))
        self.names, self.objects, self.types, self.ignore = names, objects, types, ignore
        self._plan()

    def _plan(self) -> None:
        triples = zip(self.modules, self.dicts, self.found, strict=True)
        self.plan = [
            (module, name, real, own, index)
            for index, (module, own, found) in enumerate(triples)
            for name, real in found or ()
        ]
        found = zip(self.modules, self.found, strict=True)
        self.others = self.fixed + [module for module, read in found if read is None]


SCAN = ModuleScan()
"""The one scan: what the last run found, for the next."""

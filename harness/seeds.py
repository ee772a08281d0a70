"""Reading a seeds option: a count, a list or a range.

``retrychaos run --seeds`` and the pytest plugin's ``--retrychaos-seeds`` read
the same forms through :func:`parse_seeds`, so one spelling works in both.
"""

from __future__ import annotations

__all__ = ["SEEDS_FORMS", "parse_seeds"]

SEEDS_FORMS = (
    "a count N >= 1 (seeds 1..N), a comma-separated list of seeds >= 0 (3,7,11) "
    "or a range A-B of seeds >= 0 with A <= B (1-10)"
)
"""The accepted forms, as error messages name them."""


def parse_seeds(raw: str) -> tuple[int, ...]:
    """Return the seeds ``raw`` names: ``3`` is 1, 2, 3; ``1,5,9`` those; ``4-6`` is 4, 5, 6.

    A list keeps its order and drops repeats (a seed run twice tells nothing new).

    Raises:
        ValueError: ``raw`` is none of the forms; the message names them and the value.
    """
    text = raw.strip()
    try:
        if "," in text:
            seeds = tuple(dict.fromkeys(int(part) for part in text.split(",")))
            if all(seed >= 0 for seed in seeds):
                return seeds
        elif "-" in text.lstrip("-"):
            low, _, high = text.partition("-")
            first, last = int(low), int(high)
            if 0 <= first <= last:
                return tuple(range(first, last + 1))
        elif int(text) >= 1:
            return tuple(range(1, int(text) + 1))
    except ValueError:
        pass
    msg = f"expected {SEEDS_FORMS}, got {raw!r}"
    raise ValueError(msg)

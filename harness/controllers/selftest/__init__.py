"""Controllers whose verdict is known: the proof that a scenario selection catches bugs.

``retrychaos selftest`` runs them before a user's controller is judged: the
correct ones (:data:`CORRECT`) must pass every selected scenario, and each
planted bug (:data:`PLANTED`: one rule broken, everything else correct) must
be caught by some selected scenario through the invariant of its rule.
"""

from .correct import CORRECT, HttpRuleFollower, SyncRuleFollower
from .follower import RuleFollower
from .planted import PLANTED, Planted
from .wire import WireController

__all__ = [
    "CORRECT",
    "PLANTED",
    "HttpRuleFollower",
    "Planted",
    "RuleFollower",
    "SyncRuleFollower",
    "WireController",
]

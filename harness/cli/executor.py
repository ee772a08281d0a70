"""``--executor local|ray`` and ``--ray-address``: where a command's cases run."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Final

from ..errors import ClusterError
from .output import say, usage_error

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..executors.ray_cluster import RayExecutor

__all__ = ["ADDRESS_HELP", "EXECUTORS", "EXECUTOR_HELP", "cluster"]

EXECUTORS: Final = ("local", "ray")
EXECUTOR_HELP: Final = (
    "Where cases run: local worker processes, or a Ray cluster "
    "(pip install 'retrychaos[ray]'; see docs/cluster.md)."
)
ADDRESS_HELP: Final = (
    "The Ray cluster to join, HOST:PORT (default: RAY_ADDRESS, else a Ray instance started "
    "on this machine)."
)


def check_executor(executor: str, address: str | None) -> None:
    """Exit 2 unless ``executor`` is known and ``address`` goes with it."""
    if executor not in EXECUTORS:
        usage_error(f"--executor expects {' or '.join(EXECUTORS)}, got {executor!r}")
    if address is not None and executor != "ray":
        usage_error("--ray-address names a Ray cluster: give it with --executor ray")


@contextlib.contextmanager
def cluster(
    executor: str, address: str | None, *, cpus: int, case_timeout_s: float | None = None
) -> Iterator[RayExecutor | None]:
    """The Ray cluster to run on (None for ``local``), left when the block ends.

    ``case_timeout_s``: each case's real-time limit on the cluster's workers.

    A missing extra or a cluster that cannot be reached exits 2 and says why.
    """
    check_executor(executor, address)
    if executor == "local":
        yield None
        return
    from ..executors.ray_cluster import connect_ray  # noqa: PLC0415 (only ray runs need it)

    try:
        joined = connect_ray(address, cpus=cpus, case_timeout_s=case_timeout_s)
    except ClusterError as exc:
        usage_error(str(exc))
    try:
        say(joined.describe())
        yield joined
    finally:
        joined.close()

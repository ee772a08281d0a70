"""Where cases run: worker processes on this machine, or a Ray cluster."""

from .base import Executor, Work
from .local import LocalExecutor
from .ray_cluster import TRIES, RayExecutor, connect_ray

__all__ = ["TRIES", "Executor", "LocalExecutor", "RayExecutor", "Work", "connect_ray"]

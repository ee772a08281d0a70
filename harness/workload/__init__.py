"""The workload: agents, tasks and the simulated model above the controller."""

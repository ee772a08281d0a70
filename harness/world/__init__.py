"""The virtual world: clock, loop, time patching, simulated services, trace."""

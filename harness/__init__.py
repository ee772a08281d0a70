"""retrychaos: the harness that chaos-tests retry controllers."""

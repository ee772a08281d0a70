"""Built-in controllers that run agent frameworks' own retry loops on the virtual clock."""

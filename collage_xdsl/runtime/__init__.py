"""Running partitioned modules: the executable, the run-time plan selector, artifacts and
output agreement."""

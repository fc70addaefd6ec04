"""Planning a module end to end: the partition library call the passes and commands
share, and its explain report."""

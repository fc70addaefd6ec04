"""Measuring kernels: estimators, the timing loop, worker processes and the cost database."""

"""The baselines Collage must beat, as plans over a dataflow graph: one backend for
everything, TVM's FuseOps, and greedy BYOC (`partition_for_<backend>`)."""

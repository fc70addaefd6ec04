"""The Collage core: dataflow graph, sub-graphs, patterns, partition rules, candidates,
costs, the search and kernel regions."""

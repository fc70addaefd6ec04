"""End-to-end refinement: moves, the refinement driver, whole-plan scoring and cut ranking."""

"""What the IR holds and means: tensors and weights, the reference interpreter, seeded
inputs, structural hashes."""

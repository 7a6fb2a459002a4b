"""Training: packing, the trainer and the three orders (the model itself: :mod:`curll.model`)."""

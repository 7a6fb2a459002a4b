"""Training: the Llama-architecture model, packing, the trainer and the three orders."""

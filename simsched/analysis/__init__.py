"""Floor 7 — analysis: the adversary search (instances where one scheduler loses to another) and
the teaching helpers (step-by-step explanations, greedy-gap instances)."""

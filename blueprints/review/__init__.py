"""Review of a plan: the Plan model, its costs, guardrails, rendering and the diff of two plans."""

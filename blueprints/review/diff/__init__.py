"""The diff of two plans: what changes, what is replaced or deleted, costs, guardrails and retention."""

"""A throwaway Slurm-on-ECS blueprint (tests only): its meaning (``spec``) and what it builds (``build``)."""

"""The aitrain command line: one module per command group, on top of everything else."""

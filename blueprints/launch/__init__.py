"""Starting a run on a deployed stack: torchrun on ECS nodes, a PyTorchJob on Kubernetes, and run records."""

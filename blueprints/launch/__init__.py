"""Starting a run on a deployed stack: torchrun on ECS nodes, a TrainJob (or a legacy PyTorchJob) on Kubernetes queued
by Kueue, the queue as kubectl shows it, and run records."""

"""aitrain: AI-training job descriptions in, reviewable Alibaba Cloud infrastructure (Pulumi) out."""

__version__ = "0.1.0"

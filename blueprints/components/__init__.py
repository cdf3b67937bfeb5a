"""Pulumi components: one ComponentResource per architectural unit (network, storage, compute)."""

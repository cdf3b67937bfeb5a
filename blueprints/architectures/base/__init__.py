"""What every blueprint shares: the spec base (pure) and the builder base (Pulumi); a base, not a blueprint."""

"""The Pulumi policy pack: aitrain's rules run by the engine on a real preview, and its configuration."""

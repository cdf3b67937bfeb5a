"""aitrain's Pulumi program (Pulumi.yaml `main: infra/`): reads the aitrain:* stack config and builds the blueprint."""

from blueprints.program import run

run()

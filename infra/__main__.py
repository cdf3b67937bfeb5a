"""aitrain's Pulumi program (Pulumi.yaml `main: infra/`): reads the aitrain:* stack config and builds the blueprint."""

from blueprints.engine.program import run

run()

"""The aitrain policy pack: every guardrail rule as a StackValidationPolicy (see blueprints/policy/pack.py).

Constructing a PolicyPack starts the analyzer's gRPC server and never returns, so this file does nothing else and
nothing imports it (tests import blueprints.policy.pack).
"""

from pulumi_policy import PolicyPack

from blueprints.policy.pack import PACK_NAME, policies

PolicyPack(name=PACK_NAME, policies=policies())

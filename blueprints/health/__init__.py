"""The health gate: the checks a node must pass before a launch, the cross-node all-reduce and its threshold.

Pure (no Pulumi): ``suites`` (the checks), ``thresholds`` (all-reduce pass line per fabric, with sources),
``commands`` (the node script and calls), ``verdict`` (reading answers), ``narrowing`` (pair tests),
``report`` (text, JSON, Markdown) and ``gate`` (the stack output ``health_gate``). ``allreduce.py`` is a standalone
script the nodes run under torchrun. The CLI is ``blueprints.cli.check``.
"""

"""The advisor: from a training job to sizing, a cost-optimal choice and a stack config (pure logic)."""

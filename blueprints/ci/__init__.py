"""Review in CI: the pull-request comment of every stack's plan diff and the GitHub workflow that posts it."""

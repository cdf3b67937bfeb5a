"""The profile: pydantic models of a job's stack, their parsing, checks and the stack-config resolution."""

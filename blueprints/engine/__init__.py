"""Running a blueprint as a Pulumi program: for `pulumi up`, and offline under mocks for the plan."""

"""The autoscaling-pool blueprint: its meaning (``spec``) and what it builds (``build``)."""

"""The kubernetes-pool blueprint: its profile (``profile``), meaning (``spec``) and what it builds (``build``)."""

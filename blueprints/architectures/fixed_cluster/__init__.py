"""The fixed-cluster blueprint: its meaning (``spec``) and what it builds (``build``)."""

"""The lingjun-cluster blueprint: PAI-Lingjun nodes on their own RDMA fabric, in an ACK Lingjun node pool."""

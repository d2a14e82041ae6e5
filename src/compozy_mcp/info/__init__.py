"""Contracts: tool descriptors, digests, the catalog and its search."""

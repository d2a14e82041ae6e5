"""Contracts: tool descriptors, digests, the catalog and its search."""

__all__ = ["catalog", "descriptors", "external"]

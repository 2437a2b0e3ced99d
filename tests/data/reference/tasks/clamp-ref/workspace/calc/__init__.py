"""A tiny package for coverage fixtures."""

"""Versioned component configuration: shared types, the scheme that reads and writes them."""

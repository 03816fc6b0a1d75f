"""Example components built on componentbase's public API."""

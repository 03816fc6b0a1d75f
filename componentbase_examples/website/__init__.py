"""An operator for a ``Website`` custom resource: ``python -m componentbase_examples.website``."""

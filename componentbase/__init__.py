"""componentbase: Kubernetes control-plane components in Python, built the way component-base builds them."""

__version__ = "0.1.0"

"""An example virtual kubelet built on componentbase."""

"""An example kube-scheduler built on componentbase."""

"""``--provider=process``: each container's command runs as a local child process."""

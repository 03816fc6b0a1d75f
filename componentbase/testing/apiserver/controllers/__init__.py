"""The kube-controller-manager controllers a cluster runs for object lifecycle, run inside the server:
the garbage collector, the namespace controller, ClusterRole aggregation, and the ``kubernetes`` Service.
"""

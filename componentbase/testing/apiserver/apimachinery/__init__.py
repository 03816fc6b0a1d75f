"""What every layer of the server speaks, as k8s.io/apimachinery holds it for kube: ``Resource`` and its
``Registry`` (the REST mapping), ``Status`` errors, label and field selectors, the three PATCH flavours, and
the user a request carries. It imports nothing else of the server.
"""

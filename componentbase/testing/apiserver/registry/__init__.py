"""The generic registry's verbs behind ``rest``: server-side apply and managedFields, DELETE with
finalizers and grace, subresources with bodies of their own, and write options (kube's
registry/generic/registry and endpoints/handlers).
"""

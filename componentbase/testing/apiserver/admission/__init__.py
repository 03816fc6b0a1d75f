"""What a write must pass before it is stored, in kube's plugin order: defaults, the built-in admission
plugins (pod defaults, Priority), validation and immutability, ValidatingAdmissionPolicies (CEL, ``..cel``),
the mutating and validating webhooks with their client and configurations, and CRD conversion webhooks.
"""

"""What is served: the built-in kinds as data, CustomResourceDefinitions and their structural schemas,
the OpenAPI documents, discovery, and the table printers (kube's registry and apiextensions-apiserver).
"""

"""Objects at rest and in motion: the in-memory store and its one resourceVersion counter, the LIST/WATCH
resourceVersion rules, LIST pages, watch streams, and the buckets versions share (kube's storage and
cacher).
"""

"""Shared informers: list+watch into a local indexed cache with event handlers, as client-go's.

``InformerFactory(api_client).pods(field_selector=...)`` is the common case; ``SharedInformer`` over a
``ListWatch`` is the general one. Cached objects are plain dicts, shared: treat them as read-only.
"""

from componentbase.informers._cache import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    deleted_object,
    meta_namespace_index,
    meta_namespace_key,
)
from componentbase.informers._dispatch import HandlerRegistration
from componentbase.informers._factory import (
    InformerFactory,
)
from componentbase.informers._health import CacheSyncCheck
from componentbase.informers._informer import SharedInformer, strip_managed_fields
from componentbase.informers._listwatch import (
    BadResponse,
    ListWatch,
)
from componentbase.informers._multi import MultiNamespaceInformer
from componentbase.util import Backoff

__all__ = [
    "NAMESPACE_INDEX",
    "Backoff",
    "BadResponse",
    "CacheSyncCheck",
    "DeletedFinalStateUnknown",
    "HandlerRegistration",
    "InformerFactory",
    "ListWatch",
    "MultiNamespaceInformer",
    "SharedInformer",
    "deleted_object",
    "meta_namespace_index",
    "meta_namespace_key",
    "strip_managed_fields",
]

"""MkDocs hook: draw the package layers of docs/architecture.md as an inline SVG, at build time.

The picture is made from ``LAYERS`` below, so it cannot drift from the list it draws, and it needs
nothing at build or view time: no Graphviz, no JavaScript, no network. A page asks for it with the
line ``<!-- layers-diagram -->``. ``tests/test_docs_architecture.py`` holds ``LAYERS`` to the
``layers`` contract of ``[tool.importlinter]`` in pyproject.toml.
"""

from __future__ import annotations

from html import escape
from typing import Any

#: The packages of componentbase, top layer first; packages in one layer never import each other.
LAYERS: list[list[str]] = [
    ["testing"],
    ["app"],
    ["controller"],
    ["webhook"],
    ["informers", "workqueue", "events", "leaderelection", "serving"],
    ["client"],
    ["componentconfig"],
    ["logs", "metrics", "tracing"],
    ["cli"],
    ["util"],
]

#: What a box says under the package's name.
ROLES = {
    "testing": "loopback API server, pytest plugin; imports util only",
    "app": "Options, Config, Command, run",
    "controller": "Manager, Controller, fencing",
    "webhook": "admission and conversion webhooks",
    "informers": "list+watch caches",
    "workqueue": "queues, rate limits",
    "events": "Event recorder",
    "leaderelection": "Lease elector",
    "serving": "HTTPS endpoints",
    "client": "the one seam to kubernetes",
    "componentconfig": "config types, strict YAML",
    "logs": "klog flags and format",
    "metrics": "Prometheus registry",
    "tracing": "OpenTelemetry spans",
    "cli": "flags, Options base",
    "util": "durations, quantities, files",
}

#: The loopback API server (componentbase.testing.apiserver) by concern, top layer first: the
#: ``apiserver-layers`` contract without its deprecated aliases of moved modules.
APISERVER_LAYERS: list[list[str]] = [
    ["__main__"],
    ["loopback"],
    ["server"],
    ["rest", "_media", "_control", "kubeconfig", "_deadlines"],
    ["controllers", "kinds", "proxy", "faults"],
    ["registry"],
    ["admission", "auth"],
    ["routing", "cel"],
    ["storage"],
    ["wire"],
    ["apimachinery"],
]

APISERVER_ROLES = {
    "__main__": "componentbase-apiserver",
    "loopback": "LoopbackAPIServer: start, stop",
    "server": "HTTP: connections, filters, dispatch",
    "rest": "the verbs' object semantics",
    "_media": "request bodies, Accept",
    "_control": "/_loopback/faults",
    "kubeconfig": "kubeconfig files",
    "_deadlines": "slow clients",
    "controllers": "GC, namespaces, aggregation",
    "kinds": "built-ins, CRDs, OpenAPI, tables",
    "proxy": "node proxy, kubelet client",
    "faults": "switchable faults",
    "registry": "apply, delete, subresources",
    "admission": "defaults, validation, policies, webhooks",
    "auth": "authn, RBAC, tokens, reviews",
    "routing": "URL to verb (RequestInfo)",
    "cel": "CEL rules and policies",
    "storage": "store, resourceVersions, watch",
    "wire": "JSON, protobuf, HTTP heads",
    "apimachinery": "Resource, Status, selectors, user",
}

MARKER = "<!-- layers-diagram -->"
APISERVER_MARKER = "<!-- apiserver-layers-diagram -->"

_WIDTH, _ROW, _GAP, _PAD = 760, 46, 12, 10
_FILL = ("#e8f0fe", "#fef7e0")


def svg(layers: list[list[str]] = LAYERS, roles: dict[str, str] = ROLES,
        title: str = "componentbase packages", ident: str = "layers") -> str:
    """One band per layer, lowest at the bottom, an arrow down the side: each imports only what is below."""
    height = len(layers) * (_ROW + _GAP) + _PAD
    inner = _WIDTH - 2 * _PAD - 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {height}" role="img" '
             f'aria-labelledby="{ident}-title" style="max-width:100%;height:auto;font-family:sans-serif">',
             f'<title id="{ident}-title">{escape(title)}, top layer first: '
             + escape("; ".join(", ".join(layer) for layer in layers)) + "</title>"]
    for row, layer in enumerate(layers):
        y = _PAD + row * (_ROW + _GAP)
        box = (inner - (len(layer) - 1) * _GAP) / len(layer)
        for i, name in enumerate(layer):
            x = _PAD + i * (box + _GAP)
            parts.append(f'<rect x="{x:.1f}" y="{y}" width="{box:.1f}" height="{_ROW}" rx="6" '
                         f'fill="{_FILL[row % 2]}" stroke="#5f6368"/>')
            cx = x + box / 2
            parts.append(f'<text x="{cx:.1f}" y="{y + 19}" text-anchor="middle" font-size="14" '
                         f'font-weight="bold">{escape(name)}</text>')
            parts.append(f'<text x="{cx:.1f}" y="{y + 36}" text-anchor="middle" font-size="11" '
                         f'fill="#3c4043">{escape(roles.get(name, ""))}</text>')
    x = _WIDTH - _PAD - 20
    parts.append(f'<line x1="{x}" y1="{_PAD + 4}" x2="{x}" y2="{height - _PAD - 14}" stroke="#5f6368" '
                 'stroke-width="2"/>')
    parts.append(f'<polygon points="{x - 7},{height - _PAD - 16} {x + 7},{height - _PAD - 16} '
                 f'{x},{height - _PAD - 2}" fill="#5f6368"/>')
    parts.append(f'<text x="{x - 8}" y="{height / 2}" font-size="11" fill="#3c4043" text-anchor="middle" '
                 f'transform="rotate(-90 {x - 8} {height / 2})">imports</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Put the picture where a page asks for it; other pages pass through untouched."""
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, '<figure class="layers">\n' + svg() + "\n</figure>")
    if APISERVER_MARKER in markdown:
        picture = svg(APISERVER_LAYERS, APISERVER_ROLES, "componentbase.testing.apiserver", "apiserver-layers")
        markdown = markdown.replace(APISERVER_MARKER, '<figure class="layers">\n' + picture + "\n</figure>")
    return markdown

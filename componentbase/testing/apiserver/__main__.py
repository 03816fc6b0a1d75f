"""``python -m componentbase.testing.apiserver`` (``componentbase-apiserver``): run the loopback server until SIGINT
or SIGTERM."""

from __future__ import annotations

import argparse
import os
import sys
import threading
from collections.abc import Sequence
from typing import NoReturn

from componentbase.util import version
from componentbase.util._signals import SignalThread

#: As invoked: the console script's name, or the ``python -m`` form.
PROG = ("componentbase-apiserver" if os.path.basename(sys.argv[0]) == "componentbase-apiserver"
        else "python -m componentbase.testing.apiserver")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, no usage dump: scripts read the failure, people read --help."""
        self.exit(2, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="A Kubernetes API server on 127.0.0.1 that keeps objects in memory. "
                "Faults can be switched at run time through /_loopback/faults (see docs/testing.md).")
    p.add_argument("--version", action="version", version=f"componentbase-apiserver {version.get()}",
                   help="print version information and quit")
    p.add_argument("--port", type=int, default=0, help="port to listen on; 0 picks a free one (default)")
    p.add_argument("--kubeconfig", metavar="PATH", help="write a kubeconfig for this server here "
                   "(default: a temporary file, named on stderr)")
    p.add_argument("--token-auth-file", metavar="FILE",
                   help='static tokens as kube-apiserver reads them: token,user,uid,"group1,group2"; '
                        "requests then need a valid bearer token, and the kubeconfig carries the first one")
    p.add_argument("--authorization-policy-file", metavar="FILE",
                   help="JSON or YAML allow-list used by SubjectAccessReviews (see docs/testing.md)")
    p.add_argument("--enforce-authorization", action="store_true",
                   help="also apply the authorization policy to requests made to this server")
    p.add_argument("--authorization-mode", default="AlwaysAllow", metavar="MODE",
                   help="AlwaysAllow (default) or RBAC: authorize every request from the stored Roles, "
                        "ClusterRoles and bindings, kube's default roles included; implies authentication")
    p.add_argument("--client-ca-file", metavar="FILE",
                   help="authenticate client certificates this CA signed (user from CN, groups from O)")
    p.add_argument("--tls", action="store_true",
                   help="serve HTTPS even without authentication (with it, HTTPS always); the kubeconfig "
                        "carries the server's CA")
    p.add_argument("--watch-history", type=int, default=10000, metavar="N",
                   help="events kept for watches to resume from; older resourceVersions get 410 Gone")
    p.add_argument("--crd-dir", action="append", default=[], metavar="DIR",
                   help="create the CustomResourceDefinitions in this folder's YAML files (or this file) at "
                        "start, as envtest's CRDDirectoryPaths; repeatable")
    p.add_argument("--enable-garbage-collector", type=_boolean, nargs="?", const=True, default=True,
                   metavar="BOOL", help="delete objects whose owners are gone and honour Foreground and Orphan "
                   "propagation (default true); =false leaves orphans in place")
    p.add_argument("--anonymous-auth", type=_boolean, nargs="?", const=True, default=True, metavar="BOOL",
                   help="with authorization enforced, a request without credentials is system:anonymous (group "
                   "system:unauthenticated), as kube-apiserver's (default true); =false answers it 401")
    p.add_argument("--bookmark-interval", type=float, default=None, metavar="SECONDS",
                   help="how often watches that allow bookmarks get one (default: 60, as kube-apiserver)")
    p.add_argument("--webhook-service", action="append", default=[], type=_webhook_service,
                   metavar="NAMESPACE/NAME=HOST:PORT", help="reach the Service that webhook configurations and CRD "
                   "conversion name in clientConfig.service at HOST:PORT (its certificate must be valid for "
                   "NAME.NAMESPACE.svc); repeatable")
    p.add_argument("--publish-kubelet-client-ca", action="store_true",
                   help="write the CA of the node proxy's client certificate into kube-system/"
                        "extension-apiserver-authentication, so kubelets (the example virtual kubelet) accept "
                        "kubectl logs, exec, attach and port-forward through this server")
    return p


def _webhook_service(value: str) -> tuple[str, str]:
    """``namespace/name=host:port``, as ``webhook_services`` takes it."""
    service, _, address = value.partition("=")
    host, _, port = address.rpartition(":")
    if service.count("/") != 1 or not all(service.split("/")) or not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{value!r} is not NAMESPACE/NAME=HOST:PORT")
    return service, address


def _boolean(value: str) -> bool:
    """A boolean flag's value as pflag's ParseBool reads it."""
    words = {"1": True, "t": True, "true": True, "0": False, "f": False, "false": False}
    if value.lower() not in words:
        raise argparse.ArgumentTypeError(f"invalid boolean {value!r}")
    return words[value.lower()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be within 0..65535, got {args.port}")
    if args.watch_history < 1:
        parser.error(f"--watch-history must be at least 1, got {args.watch_history}")
    if args.bookmark_interval is not None and args.bookmark_interval <= 0:
        parser.error(f"--bookmark-interval must be positive, got {args.bookmark_interval}")
    if args.authorization_mode not in ("AlwaysAllow", "RBAC"):
        parser.error(f"--authorization-mode must be AlwaysAllow or RBAC, got {args.authorization_mode!r}")
    # The server is imported once the flags are parsed: --help and --version answer without loading it.
    from .loopback import LoopbackAPIServer
    from .storage.watch import DEFAULT_BOOKMARK_INTERVAL

    try:
        server = LoopbackAPIServer(
            port=args.port,
            kubeconfig_path=args.kubeconfig,
            token_auth_file=args.token_auth_file,
            authorization_policy_file=args.authorization_policy_file,
            enforce_authorization=args.enforce_authorization,
            watch_history=args.watch_history,
            bookmark_interval=DEFAULT_BOOKMARK_INTERVAL if args.bookmark_interval is None else args.bookmark_interval,
            crd_dirs=args.crd_dir,
            garbage_collection=args.enable_garbage_collector,
            anonymous_auth=args.anonymous_auth,
            tls=True if args.tls else None,
            client_ca_file=args.client_ca_file,
            rbac=args.authorization_mode == "RBAC",
            publish_kubelet_client_ca=args.publish_kubelet_client_ca,
            webhook_services=dict(args.webhook_service),
        )
        server.start()
    except (OSError, ValueError) as err:
        print(f"{PROG}: error: {_describe(err)}", file=sys.stderr)
        return 1
    stop = threading.Event()
    with SignalThread(lambda signum: stop.set()):  # not set from a Python handler: see util._signals
        print(server.url, flush=True)
        if args.kubeconfig is None:
            print(f"kubeconfig: {server.kubeconfig_path}", file=sys.stderr, flush=True)
        try:
            stop.wait()
        finally:
            server.stop()
    return 0


def _describe(err: BaseException) -> str:
    if isinstance(err, OSError) and err.filename:
        return f"{err.filename}: {err.strerror}"
    if isinstance(err, OSError):
        return f"cannot listen: {err.strerror or err}"
    return str(err)


if __name__ == "__main__":
    sys.exit(main())

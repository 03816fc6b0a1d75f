"""CEL as a user of the real kubectl sees it: a GatewayClass of the Gateway API whose immutable field is
changed, a CRD whose rule does not compile, and ValidatingAdmissionPolicies' warning and denial, each in
kube's words."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from componentbase.testing import LoopbackAPIServer
from tests.testing.conftest import KubectlAt
from tests.testing.test_cel_rules import GATEWAY, rules_crd

pytestmark = pytest.mark.process


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackAPIServer]:
    with LoopbackAPIServer() as api:
        yield api


def _file(tmp_path: Path, obj: dict[str, Any]) -> str:
    path = tmp_path / f"{obj['metadata']['name']}.yaml"
    path.write_text(yaml.safe_dump(obj))
    return str(path)


def test_kubectl_is_refused_a_change_to_an_immutable_field(server: LoopbackAPIServer, kubectl_at: KubectlAt,
                                                           tmp_path: Path) -> None:
    def kubectl(*args: str, check: bool = True) -> Any:
        return kubectl_at(server.kubeconfig_path, *args, check=check)

    kubectl("apply", "-f", str(GATEWAY / "gateway.networking.k8s.io_gatewayclasses.yaml"))
    gc = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass", "metadata": {"name": "gc"},
          "spec": {"controllerName": "example.com/one"}}
    kubectl("apply", "-f", _file(tmp_path, gc))
    gc["spec"]["controllerName"] = "example.com/two"
    patch = '{"spec":{"controllerName":"example.com/two"}}'
    for args in (("apply", "-f", _file(tmp_path, gc)), ("replace", "-f", _file(tmp_path, gc)),
                 ("patch", "gatewayclass", "gc", "--type=merge", "-p", patch)):
        done = kubectl(*args, check=False)
        assert done.returncode == 1, args
        assert done.stderr.strip() == ('The GatewayClass "gc" is invalid: spec.controllerName: Invalid value: '
                                       '"string": Value is immutable'), done.stderr
    assert kubectl("get", "gatewayclass", "gc", "-o", "jsonpath={.spec.controllerName}").stdout == "example.com/one"


def test_kubectl_is_refused_a_crd_whose_rule_does_not_compile(server: LoopbackAPIServer, kubectl_at: KubectlAt,
                                                              tmp_path: Path) -> None:
    crd = rules_crd({"rule": "self.replicas > ", "message": "positive"}, plural="brokens")
    done = kubectl_at(server.kubeconfig_path, "create", "-f", _file(tmp_path, crd), check=False)
    assert done.returncode == 1
    assert done.stderr.strip().startswith(
        'The CustomResourceDefinition "brokens.example.com" is invalid: spec.validation.openAPIV3Schema.properties'
        '[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.replicas > ", '
        'Message:"positive", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", '
        "OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input "
        "'<EOF>' expecting")
    assert kubectl_at(server.kubeconfig_path, "get", "crd", "brokens.example.com", check=False).returncode == 1


def test_kubectl_shows_a_policys_warning_and_denial(server: LoopbackAPIServer, kubectl_at: KubectlAt,
                                                    tmp_path: Path) -> None:
    def kubectl(*args: str, check: bool = True) -> Any:
        return kubectl_at(server.kubeconfig_path, *args, check=check)

    rules = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
    for name, actions, expression in (("warned", ["Warn"], "object.metadata.name != 'w'"),
                                      ("denied", ["Deny"], "object.metadata.name != 'd'")):
        kubectl("apply", "-f", _file(tmp_path, {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {"matchConstraints": {"resourceRules": [rules]},
                     "validations": [{"expression": expression, "message": "not " + name}]}}))
        kubectl("apply", "-f", _file(tmp_path, {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": f"{name}-binding"}, "spec": {"policyName": name, "validationActions": actions}}))
    done = kubectl("create", "configmap", "w")
    assert done.stderr.strip() == ("Warning: Validation failed for ValidatingAdmissionPolicy 'warned' with binding "
                                   "'warned-binding': not warned")
    done = kubectl("create", "configmap", "d", check=False)
    assert done.returncode == 1
    assert done.stderr.strip() == ('error: failed to create configmap: configmaps "d" is forbidden: '
                                   "ValidatingAdmissionPolicy 'denied' with binding 'denied-binding' denied request: "
                                   "not denied")


def test_the_cel_runtime_loads_with_the_first_crd_that_has_rules() -> None:
    """A server whose CRDs carry no rules never imports cel-expr-python (it is native and heavy)."""
    script = textwrap.dedent("""
        import sys
        from kubernetes import client
        from componentbase.testing import LoopbackAPIServer
        from tests.testing.test_cel_rules import rules_crd
        with LoopbackAPIServer() as server:
            ext = client.ApiextensionsV1Api(server.api_client())
            crd = rules_crd(plural="plains")
            spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
            del spec["x-kubernetes-validations"]
            ext.create_custom_resource_definition(crd)
            print("cel_expr_python" in sys.modules)
            ext.create_custom_resource_definition(rules_crd({"rule": "self.replicas >= 0"}, plural="ruleds"))
            print("cel_expr_python" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).parents[2])
    assert done.stdout.split() == ["False", "True"], done.stderr

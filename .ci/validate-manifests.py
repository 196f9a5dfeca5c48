#!/usr/bin/env python3
"""Validates every Kubernetes manifest rebind emitted during the tests.

    validate-manifests.py CRD_SCHEMA... MANIFEST_DIR

The tests write each manifest `rebind secret` and `apply --secret-out`
produce into MANIFEST_DIR (REBIND_MANIFEST_DIR, see
tests/it/emitted_manifests.rs). Each document is validated with a real
validator, offline:

- a core object (the cluster Secret) with `kubernetes-validate` (PyPI; the
  Kubernetes OpenAPI schemas ship inside the package), strict: unknown
  fields are errors, as with `kubectl apply --validate=strict`;
- an ExternalSecret (a CRD) with `jsonschema` against the CRD's own
  openAPIV3Schema of its apiVersion (each CRD_SCHEMA holds versions, vendored
  in testdata/external-secrets/: v1 and v1beta1), made
  strict the same way; its metadata as Kubernetes ObjectMeta, and the Secret
  its template renders as a Secret, both with `kubernetes-validate`;
- a cluster Secret's `config` must be a JSON object (what ArgoCD reads).

Prints the count validated; exits 1 on any invalid manifest, or when there
is none at all (the tests wrote nothing: nothing was checked).
"""

import copy
import json
import pathlib
import re
import sys

import jsonschema
import kubernetes_validate
import yaml

K8S = kubernetes_validate.latest_version()


def strict(schema):
    """The OpenAPI schema with unknown fields refused: every object that
    names its properties and says nothing of others gets
    `additionalProperties: false` (the API server would prune such fields
    in silence; `kubectl --validate=strict` refuses them)."""
    s = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if (
                node.get("type") == "object"
                and "properties" in node
                and "additionalProperties" not in node
                and not node.get("x-kubernetes-preserve-unknown-fields")
            ):
                node["additionalProperties"] = False
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(s)
    return s


def crd_schemas(paths):
    """apiVersion -> validator, from the vendored CRD versions."""
    out = {}
    for path in paths:
        doc = yaml.safe_load(pathlib.Path(path).read_text())
        for v in doc["versions"]:
            schema = strict(v["schema"]["openAPIV3Schema"])
            out["external-secrets.io/" + v["name"]] = jsonschema.Draft7Validator(schema)
    return out


# What the OpenAPI schemas leave to the API server: apimachinery's name and
# label rules (k8s.io/apimachinery/pkg/util/validation), as its regexes.
DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN = rf"{DNS1123_LABEL}(\.{DNS1123_LABEL})*"
QUALIFIED_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_VALUE = r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"


def key_ok(key):
    prefix, _, name = key.rpartition("/")
    return (
        (not prefix or (len(prefix) <= 253 and re.fullmatch(DNS1123_SUBDOMAIN, prefix)))
        and len(name) <= 63
        and re.fullmatch(QUALIFIED_NAME, name)
    )


def meta_errors(meta, what):
    """ObjectMeta as the API server checks it: name, namespace, label and
    annotation keys, label values."""
    errors = []
    name, ns = meta.get("name"), meta.get("namespace")
    if not (isinstance(name, str) and len(name) <= 253 and re.fullmatch(DNS1123_SUBDOMAIN, name)):
        errors.append(f"{what}: metadata.name {name!r} is not a DNS-1123 subdomain")
    if ns is not None and not (
        isinstance(ns, str) and len(ns) <= 63 and re.fullmatch(DNS1123_LABEL, ns)
    ):
        errors.append(f"{what}: metadata.namespace {ns!r} is not a DNS-1123 label")
    for field in ("labels", "annotations"):
        for k, v in (meta.get(field) or {}).items():
            if not (isinstance(k, str) and key_ok(k)):
                errors.append(f"{what}: metadata.{field} key {k!r} is not a qualified name")
            if field == "labels" and not (
                isinstance(v, str) and len(v) <= 63 and re.fullmatch(LABEL_VALUE, v)
            ):
                errors.append(f"{what}: label {k}={v!r} is not a valid label value")
    return errors


def k8s(obj, what):
    """Errors of `obj` as a core Kubernetes object (strict)."""
    try:
        kubernetes_validate.validate(obj, K8S, strict=True)
        return meta_errors(obj.get("metadata") or {}, what)
    except kubernetes_validate.ValidationError as e:
        path = ".".join(str(p) for p in e.path)
        return [f"{what}: {path}: {e.message}"]
    except Exception as e:  # a schema not found is an invalid manifest too
        return [f"{what}: {type(e).__name__}: {e}"]


def config_errors(data, what):
    """A cluster registration's `config` must be a JSON object."""
    config = (data or {}).get("config")
    if config is None:
        return []
    try:
        if isinstance(json.loads(config), dict):
            return []
        return [f"{what}: config is JSON but not an object"]
    except ValueError as e:
        return [f"{what}: config is not JSON: {e}"]


def external_secret(doc, validator):
    errors = [
        f"{'.'.join(str(p) for p in e.absolute_path)}: {e.message}"
        for e in validator.iter_errors(doc)
    ]
    meta = doc.get("metadata", {})
    errors += k8s(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}, "metadata"
    )
    target = doc.get("spec", {}).get("target", {})
    template = target.get("template", {})
    rendered = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": target.get("name", meta.get("name")),
            "namespace": meta.get("namespace"),
            **template.get("metadata", {}),
        },
        "type": template.get("type", "Opaque"),
        "stringData": template.get("data", {}),
    }
    errors += k8s(rendered, "the Secret its template renders")
    errors += config_errors(template.get("data"), "the template's data")
    return errors


def validate(doc, crds):
    if not isinstance(doc, dict) or "apiVersion" not in doc or "kind" not in doc:
        return ["not a Kubernetes object (no apiVersion and kind)"]
    if doc["apiVersion"] in crds:
        if doc["kind"] != "ExternalSecret":
            return [f"no schema for {doc['kind']} in {doc['apiVersion']}"]
        return external_secret(doc, crds[doc["apiVersion"]])
    if "." in doc["apiVersion"].split("/")[0]:
        return [f"no schema for {doc['apiVersion']} {doc['kind']}"]
    return k8s(doc, doc["kind"]) + config_errors(doc.get("stringData"), "stringData")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    crds = crd_schemas(sys.argv[1:-1])
    files = sorted(p for p in pathlib.Path(sys.argv[-1]).iterdir() if p.is_file())
    n, bad, kinds = 0, 0, {}
    for f in files:
        try:
            docs = [d for d in yaml.safe_load_all(f.read_text()) if d is not None]
        except yaml.YAMLError as e:
            print(f"INVALID {f.name}: not YAML: {e}")
            bad += 1
            continue
        if not docs:
            print(f"INVALID {f.name}: no document")
            bad += 1
        for doc in docs:
            n += 1
            errors = validate(doc, crds)
            kind = doc.get("kind", "?") if isinstance(doc, dict) else "?"
            kinds[kind] = kinds.get(kind, 0) + 1
            for e in errors:
                print(f"INVALID {f.name} ({kind}): {e}")
            bad += bool(errors)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    print(
        f"manifests: {n} validated from {len(files)} files ({summary}) "
        f"against Kubernetes {K8S} and the vendored CRD schemas; {bad} invalid"
    )
    if n == 0:
        sys.exit("manifests: none written (is REBIND_MANIFEST_DIR passed to the tests?)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

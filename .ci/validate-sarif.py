"""Validates SARIF logs against the vendored SARIF 2.1.0 JSON schema.

Usage: validate-sarif.py SCHEMA DIR

Every *.sarif file in DIR must be valid, formats included (`uri`,
`uri-reference`: checked through rfc3986-validator, which must be
installed). Fails when DIR holds no log, when a format checker is missing,
or when a log that breaks the schema's URI format is not caught (so a
validator that checks nothing cannot pass).
"""

import json
import pathlib
import sys

from jsonschema import Draft4Validator, FormatChecker


def main() -> int:
    schema_path, log_dir = sys.argv[1], pathlib.Path(sys.argv[2])
    schema = json.loads(pathlib.Path(schema_path).read_text(encoding="utf-8"))
    checker = FormatChecker()
    for fmt in ("uri", "uri-reference"):
        if fmt not in checker.checkers:
            print(f"sarif: no checker for format {fmt!r} (pip install rfc3986-validator)")
            return 1
    Draft4Validator.check_schema(schema)
    validator = Draft4Validator(schema, format_checker=checker)

    # The validator must catch a raw path with a space in artifactLocation.uri.
    bad = {
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "rebind"}},
            "results": [{
                "message": {"text": "x"},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": "my apps/x.yaml"}}}],
            }],
        }],
    }
    if validator.is_valid(bad):
        print("sarif: the validator accepts a uri with a space: formats are not checked")
        return 1

    logs = sorted(log_dir.glob("*.sarif"))
    if not logs:
        print(f"sarif: no SARIF log in {log_dir}: the tests wrote none")
        return 1
    failed = 0
    for log in logs:
        errors = sorted(
            validator.iter_errors(json.loads(log.read_text(encoding="utf-8"))),
            key=lambda e: list(e.path),
        )
        for e in errors:
            where = "/".join(str(p) for p in e.path)
            print(f"sarif: {log.name}: {where}: {e.message}")
        failed += bool(errors)
    print(f"sarif: {len(logs) - failed} of {len(logs)} logs valid against the SARIF 2.1.0 schema")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

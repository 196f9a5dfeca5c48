//! The IAM policy table (`src/model/iam.rs`) is the only place that names
//! the keys of an IAM trust policy: a string literal equal to one of them
//! may appear outside it only where [`ALLOWED`] says why. Test modules
//! (fixtures written as text) are not read.

use rebind::model::iam;
use std::path::{Path, PathBuf};

/// Literals that name a key outside the table, each with its reason.
const ALLOWED: &[(&str, &str, &str)] = &[
    // The text layer's rule for what spells an issuer's condition key
    // (`<issuer>:sub`) sits below the model layer and cannot import it.
    ("src/text/issuer.rs", "sub", "a condition key's suffix"),
    ("src/text/issuer.rs", "aud", "a condition key's suffix"),
];

fn keys() -> Vec<&'static str> {
    let mut k = vec![
        iam::STATEMENT,
        iam::SID,
        iam::EFFECT,
        iam::ALLOW,
        iam::ACTION,
        iam::PRINCIPAL,
        iam::FEDERATED,
        iam::CONDITION,
        iam::STRING_EQUALS,
        iam::STRING_LIKE,
        iam::FOR_ANY_VALUE,
        iam::SUBJECT,
        iam::AUDIENCE,
        iam::CFN_PARAMETERS,
        iam::CFN_DEFAULT,
        iam::CFN_REF,
        iam::CFN_ROLE,
    ];
    k.extend(iam::WEB_IDENTITY_ACTIONS.iter().filter(|a| a.len() > 1));
    k
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn iam_keys_are_named_only_in_the_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut found = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "src/model/iam.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for k in keys() {
            for lit in [format!("\"{k}\""), format!("\":{k}\"")] {
                if code.contains(&lit) && !ALLOWED.iter().any(|(p, key, _)| *p == rel && *key == k)
                {
                    found.push(format!("{rel}: {lit}"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "IAM keys named outside src/model/iam.rs: {found:?}"
    );
}

#[test]
fn the_allow_list_is_still_needed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (path, key, why) in ALLOWED {
        let text = std::fs::read_to_string(root.join(path)).unwrap();
        assert!(text.contains(&format!("\"{key}\"")), "{path} {key}: {why}");
    }
}

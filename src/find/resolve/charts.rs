//! A chart's values as ArgoCD gives them (argo-cd
//! `reposerver/repository/repository.go`, `helmTemplate`; docs
//! `user-guide/helm.md`, "Helm Value Precedence": `parameters >
//! valuesObject > values > valueFiles > helm repository values.yaml`):
//! [`inline_values`] turns what a source gives inline
//! ([`InlineHelm`], the table's one reading, which discovery also finds
//! positions in) into values documents in that order, to put after the
//! chart's `values.yaml` and the source's value files.

use crate::find::params::set_path;
use crate::model::application::{helm_parameter, InlineHelm};
use crate::syntax::yaml::{self, Node, Seg, Value};

/// One values document and the text its byte offsets index (`toYaml`
/// splices a node's bytes).
pub type ValuesDoc = (Node, String);

/// The values documents `inline` gives, lowest precedence first:
/// `valuesObject` when it is set, else the `values` string (argo-cd
/// `ApplicationSourceHelm.ValuesYAML`: the object replaces the string, the
/// two are not merged), then `parameters` (Helm `--set`, and
/// `--set-string` for `forceString`, which comes after). `file_text` is
/// the text of the Application's file (the `valuesObject` node's offsets).
/// `Err` names what is not followed: `fileParameters`, a values string
/// that is not one YAML mapping, a parameter name that is not a path of
/// keys, a value Helm or ArgoCD would not take as written (a `{a,b}`
/// list, a backslash escape, a `$VAR` ArgoCD substitutes, `null`), or a
/// template action (an ApplicationSet's generator parameter).
pub fn inline_values(inline: &InlineHelm, file_text: &str) -> Result<Vec<ValuesDoc>, String> {
    if inline.file_parameters {
        return Err("`helm.fileParameters` (a file's content as a value) is not followed".into());
    }
    let mut out = Vec::new();
    if let Some(n) = &inline.object {
        if !matches!(n.value, Value::Map(_)) {
            return Err("a `helm.valuesObject` that is not a mapping is not followed".into());
        }
        out.push((n.clone(), file_text.to_string()));
    } else if let Some(text) = inline.values.as_ref().and_then(Node::as_str) {
        let docs = yaml::read_yaml_or_json(text)
            .map_err(|(l, c, why)| format!("`helm.values` does not parse ({l}:{c}: {why})"))?;
        match docs.as_slice() {
            [] => {}
            [doc] if matches!(doc.value, Value::Map(_)) => out.push((doc.clone(), text.into())),
            _ => return Err("a `helm.values` that is not one YAML mapping is not followed".into()),
        }
    }
    if let Some(list) = &inline.parameters {
        out.extend(parameters(list)?);
    }
    // An ApplicationSet template's `{{.param}}` is each generated
    // Application's own value.
    for (doc, _) in &out {
        let mut templated = false;
        doc.walk(&mut |_, n: &Node| {
            templated |= matches!(&n.value, Value::Scalar(v, _) if v.contains("{{"));
        });
        if templated {
            return Err(
                "they hold a template action (generator parameters), which is not followed".into(),
            );
        }
    }
    Ok(out)
}

/// `helm.parameters` as one values document: `--set` ones, then
/// `--set-string` ones (argo-cd `util/helm/cmd.go` passes them in that
/// order), a later name over an earlier one.
fn parameters(list: &Node) -> Result<Option<ValuesDoc>, String> {
    let Value::Seq(items) = &list.value else {
        return Ok(None);
    };
    let mut set = serde_json::Map::new();
    for forced in [false, true] {
        for item in items {
            let (name, value, force) = helm_parameter(item);
            if force != forced {
                continue;
            }
            let Some(name) = name.and_then(Node::as_str) else {
                return Err("a `helm.parameters` item without a name is not followed".into());
            };
            let keys: Option<Vec<String>> = set_path(name).and_then(|p| {
                p.0.into_iter()
                    .map(|s| match s {
                        Seg::Key(k) => Some(k),
                        Seg::Index(_) => None,
                    })
                    .collect()
            });
            let Some(keys) = keys else {
                return Err(format!("the parameter `{name}` is not followed"));
            };
            let raw = value.and_then(Node::as_str).unwrap_or("");
            let typed = typed(raw, force)
                .ok_or_else(|| format!("the parameter `{name}`'s value `{raw}` is not followed"))?;
            put(&mut set, &keys, typed);
        }
    }
    if set.is_empty() {
        return Ok(None);
    }
    let text = serde_json::Value::Object(set).to_string();
    let doc = yaml::read_yaml_or_json(&text)
        .ok()
        .and_then(|d| d.into_iter().next())
        .ok_or("the parameters do not make a values document")?;
    Ok(Some((doc, text)))
}

/// A `--set` value as Helm types it (`pkg/strvals`, `typedVal`): `true`,
/// `false` (any case) and a base-10 integer not led by `0` are typed,
/// anything else a string; `--set-string` keeps a string. `None` for what
/// is not taken as written: `{a,b}` (a list), a backslash (an escape),
/// `$` (ArgoCD substitutes `$ARGOCD_APP_NAME` and the like), `null`.
fn typed(raw: &str, force: bool) -> Option<serde_json::Value> {
    use serde_json::Value as J;
    let list = raw.starts_with('{') && raw.ends_with('}');
    if list || raw.contains(['\\', '$']) {
        return None;
    }
    if force {
        return Some(J::String(raw.into()));
    }
    let lower = raw.to_ascii_lowercase();
    Some(match lower.as_str() {
        "true" => J::Bool(true),
        "false" => J::Bool(false),
        "null" => return None,
        "0" => J::from(0),
        _ if !raw.starts_with('0') => raw.parse::<i64>().map_or(J::String(raw.into()), J::from),
        _ => J::String(raw.into()),
    })
}

/// `value` put at `keys` in `map`, making the mappings on the way (a
/// scalar on the way is replaced).
fn put(
    map: &mut serde_json::Map<String, serde_json::Value>,
    keys: &[String],
    value: serde_json::Value,
) {
    let Some((last, path)) = keys.split_last() else {
        return;
    };
    let mut at = map;
    for k in path {
        let slot = at
            .entry(k.clone())
            .or_insert_with(|| serde_json::Value::Object(Default::default()));
        if !slot.is_object() {
            *slot = serde_json::Value::Object(Default::default());
        }
        let serde_json::Value::Object(next) = slot else {
            return;
        };
        at = next;
    }
    at.insert(last.clone(), value);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inline_of(helm: &str) -> (InlineHelm, String) {
        let text = format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: a}}\nspec:\n  source:\n    repoURL: r\n    path: p\n    helm:\n{helm}");
        let doc = yaml::read_yaml_or_json(&text).unwrap().remove(0);
        let m = crate::model::application::Manifest {
            file: "a.yaml",
            doc: &doc,
        };
        let app = crate::model::application::app_of(&m).unwrap();
        (app.sources[0].inline.clone(), text)
    }

    fn at(docs: &[ValuesDoc], keys: &[&str]) -> Option<String> {
        docs.iter()
            .rev()
            .find_map(|(d, _)| d.at(keys).map(|n| n.as_str().unwrap_or("?").to_string()))
    }

    /// docs/user-guide/helm.md "Helm Value Precedence" and argo-cd
    /// `ApplicationSourceHelm.ValuesYAML`: `valuesObject` replaces
    /// `values`; `parameters` come last, `forceString` ones after the
    /// others (`util/helm/cmd.go`: `--set` then `--set-string`).
    #[test]
    fn inline_values_in_argocd_s_precedence() {
        let (i, t) = inline_of("      values: |\n        a: from-values\n        b: only-values\n      valuesObject:\n        a: from-object\n      parameters:\n        - {name: c.d, value: 'true'}\n        - {name: a, value: x, forceString: true}\n        - {name: a, value: y}\n");
        let docs = inline_values(&i, &t).unwrap();
        assert_eq!(at(&docs, &["a"]).as_deref(), Some("x"));
        assert_eq!(at(&docs, &["b"]), None);
        assert_eq!(at(&docs, &["c", "d"]).as_deref(), Some("true"));
        let (i, t) = inline_of("      values: |\n        a: from-values\n");
        assert_eq!(
            at(&inline_values(&i, &t).unwrap(), &["a"]).as_deref(),
            Some("from-values")
        );
        for refused in [
            "      fileParameters: [{name: a, path: f}]\n",
            "      parameters: [{name: 'a[0]', value: x}]\n",
            "      parameters: [{name: a, value: '{x,y}'}]\n",
            "      parameters: [{name: a, value: '$ARGOCD_APP_NAME'}]\n",
            "      values: |\n        a: 1\n        ---\n        b: 2\n",
            "      valuesObject: {a: '{{.rev}}'}\n",
            "      parameters: [{name: a, value: '{{.rev}}'}]\n",
        ] {
            let (i, t) = inline_of(refused);
            assert!(inline_values(&i, &t).is_err(), "{refused}");
        }
    }

    /// Helm `pkg/strvals` `typedVal`: booleans and integers are typed,
    /// a leading zero keeps a string, `--set-string` keeps a string.
    #[test]
    fn set_values_are_typed_as_helm_types_them() {
        use serde_json::json;
        assert_eq!(typed("TRUE", false), Some(json!(true)));
        assert_eq!(typed("false", true), Some(json!("false")));
        assert_eq!(typed("42", false), Some(json!(42)));
        assert_eq!(typed("042", false), Some(json!("042")));
        assert_eq!(typed("0", false), Some(json!(0)));
        assert_eq!(typed("1.5", false), Some(json!("1.5")));
        assert_eq!(typed("null", false), None);
    }
}

//! DNS and Kubernetes names: host names (RFC 1035/1123), DNS-1123 labels and
//! subdomains, label keys and values. The one place these rules live.

use std::net::Ipv4Addr;

/// Why `host` is not a name DNS can hold (RFC 1035/1123): letters, digits
/// and `-` in labels of 1-63 characters that neither start nor end with `-`,
/// 253 characters in all; a name whose last label is all digits must be an
/// IPv4 address.
pub fn check_dns_name(host: &str) -> Result<(), String> {
    if host.len() > 253 {
        return Err(format!("{} characters, DNS allows 253", host.len()));
    }
    for label in host.split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(format!(
                "the label {label:?} has {} characters, DNS allows 1-63",
                label.len()
            ));
        }
        if let Some(c) = label
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '-'))
        {
            return Err(format!(
                "the label {label:?} holds {c:?}; a host name holds only letters, digits and '-'"
            ));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(format!("the label {label:?} starts or ends with '-'"));
        }
    }
    let last = host.rsplit('.').next().unwrap_or(host);
    if last.bytes().all(|b| b.is_ascii_digit()) && host.parse::<Ipv4Addr>().is_err() {
        return Err("it reads as an IPv4 address but is not one".into());
    }
    Ok(())
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most `max` bytes.
pub fn is_label_of(s: &str, max: usize) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= max
        && b.iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}
/// Kubernetes' DNS-1123 label (namespaces).
pub fn is_dns_label(s: &str) -> bool {
    is_label_of(s, 63)
}
/// Kubernetes' DNS-1123 subdomain (object names, label key prefixes).
pub fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(|l| is_label_of(l, 253))
}
/// A DNS host name, any case (SNI).
pub fn is_hostname(s: &str) -> bool {
    check_dns_name(s).is_ok()
}
/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, at most 63: a label key's name, a label value.
pub fn is_qualified_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}
/// A label or annotation key: `[prefix/]name`, prefix a DNS-1123 subdomain.
pub fn is_qualified_name(key: &str) -> bool {
    match key.split('/').collect::<Vec<_>>().as_slice() {
        [name] => is_qualified_part(name),
        [prefix, name] => is_dns_subdomain(prefix) && is_qualified_part(name),
        _ => false,
    }
}
/// A label value: empty, or a qualified name part.
pub fn is_label_value(v: &str) -> bool {
    v.is_empty() || is_qualified_part(v)
}

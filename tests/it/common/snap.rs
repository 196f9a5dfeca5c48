//! Snapshots of whole outputs (files in the top-level `snapshots/` folder),
//! with what varies between runs normalised first.

use std::path::Path;

/// Asserts that `body` is the snapshot `snapshots/NAME.snap`. Names are
/// `<module>__<test>` (or a short name for the `snapshots` module's own).
pub fn check(name: &str, body: &str) {
    // Relative to this file: tests/it/common/ -> the crate root.
    insta::with_settings!({snapshot_path => "../../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, body);
    });
}

/// `text` with what differs from run to run made stable: the temporary
/// directory `dir` (as given and as the system resolves it) becomes `[DIR]`,
/// and a carriage return is shown as `<CR>`.
pub fn normalise(text: &str, dir: &Path) -> String {
    let mut out = text.to_string();
    let mut dirs = vec![dir.to_path_buf()];
    if let Ok(real) = dir.canonicalize() {
        dirs.push(real);
    }
    // The longer first: one may hold the other (`/private/tmp/x`, `/tmp/x`).
    dirs.sort_by_key(|d| std::cmp::Reverse(d.as_os_str().len()));
    for d in dirs {
        let d = d.to_string_lossy().into_owned();
        if !d.is_empty() {
            out = out.replace(&d, "[DIR]");
        }
    }
    out.replace('\r', "<CR>")
}

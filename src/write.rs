//! Putting verified plans on disk: all files or none.
//!
//! 1. Every target is checked first: still a regular file with no other hard
//!    link, writable, and byte-for-byte what was planned from (a file changed
//!    since is an error).
//! 2. Each new text goes to a temporary file in the target's directory (its
//!    name cut to fit the file system's limit), with the target's mode and,
//!    where the process may, its owner and group, and is fsynced.
//! 3. The targets are checked once more, then each temporary file is renamed
//!    over its target. If a rename fails, the files already renamed get their
//!    old bytes back the same way, so the run leaves every file as it was.

use crate::rewrite::FilePlan;
use anyhow::{anyhow, bail, Context, Result};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Callbacks run at fixed points of [`write_all_with`] (tests use them to
/// pause, slow down or fail a write; [`write_all`] runs none).
#[derive(Default)]
pub struct Hooks<'a> {
    /// Runs once every plan is known, before the first check and write.
    pub before_write: Option<&'a dyn Fn()>,
    /// Runs after the `n`th target (0-based) was renamed into place.
    pub after_rename: Option<&'a dyn Fn(usize)>,
}

/// The longest file name most file systems take, in bytes.
const NAME_MAX: usize = 255;

/// A temporary name beside `target`: `.<name>.rebind-<pid>-<n>.tmp`, with
/// `<name>` cut short (on a character boundary) so the whole name stays
/// within [`NAME_MAX`] bytes; the pid and `n` keep it unique.
fn temp_path(target: &Path, n: usize) -> PathBuf {
    let name = target
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let suffix = format!(".rebind-{}-{n}.tmp", std::process::id());
    let room = NAME_MAX - 1 - suffix.len();
    let mut cut = name.len().min(room);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    target.with_file_name(format!(".{}{suffix}", &name[..cut]))
}

fn check_unchanged(plan: &FilePlan) -> Result<()> {
    let meta = fs::symlink_metadata(&plan.path)
        .with_context(|| format!("{}: vanished since it was planned", plan.rel))?;
    if !meta.is_file() {
        bail!("{}: is no longer a regular file", plan.rel);
    }
    if meta.permissions().readonly() {
        bail!("{}: is read-only; not rewriting it", plan.rel);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            bail!(
                "{}: has {} hard links; replacing it would split it from the other links, and writing it in place would not be atomic; not rewriting it (break the link with `cp` and `mv`, or edit it by hand)",
                plan.rel,
                meta.nlink()
            );
        }
    }
    if !same_bytes(&plan.path, plan.old.as_bytes())
        .with_context(|| format!("{}: cannot read it again", plan.rel))?
    {
        bail!(
            "{}: changed on disk since it was planned; run rebind again",
            plan.rel
        );
    }
    Ok(())
}

/// Whether the file holds exactly `want`, read in chunks (big files count).
fn same_bytes(path: &Path, want: &[u8]) -> std::io::Result<bool> {
    use std::io::Read;
    let mut f = File::open(path)?;
    if f.metadata()?.len() != want.len() as u64 {
        return Ok(false);
    }
    let mut buf = vec![0u8; 64 * 1024];
    let mut at = 0;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok(at == want.len());
        }
        if at + n > want.len() || buf[..n] != want[at..at + n] {
            return Ok(false);
        }
        at += n;
    }
}

/// Writes `bytes` to the new file `path` with the mode of `like` and, where
/// the process may, its owner and group (else its group alone, else neither:
/// a process may only give a file away as root or to a group it is in).
fn write_temp(path: &Path, bytes: &[u8], like: &Path) -> Result<()> {
    let meta = fs::metadata(like)?;
    let mut f = OpenOptions::new().write(true).create_new(true).open(path)?;
    f.write_all(bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let (uid, gid) = (meta.uid(), meta.gid());
        let own = f.metadata()?;
        if (own.uid(), own.gid()) != (uid, gid)
            && std::os::unix::fs::fchown(&f, Some(uid), Some(gid)).is_err()
        {
            let _ = std::os::unix::fs::fchown(&f, None, Some(gid));
        }
    }
    // After the chown, which may clear set-id bits.
    f.set_permissions(meta.permissions())?;
    f.sync_all()?;
    Ok(())
}

fn sync_dir(dir: &Path) {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Writes every plan, or none of them.
pub fn write_all(plans: &[FilePlan]) -> Result<()> {
    write_all_with(plans, &Hooks::default())
}

/// [`write_all`] with callbacks at its fixed points.
pub fn write_all_with(plans: &[FilePlan], hooks: &Hooks) -> Result<()> {
    if let Some(f) = hooks.before_write {
        f();
    }
    for p in plans {
        check_unchanged(p)?;
    }
    let mut temps: Vec<PathBuf> = Vec::with_capacity(plans.len());
    let cleanup = |temps: &[PathBuf]| {
        for t in temps {
            let _ = fs::remove_file(t);
        }
    };
    // Temporary files are written and fsynced on several threads: fsync, not
    // the bytes, is what a rewrite of many small files waits for.
    temps.extend(plans.iter().enumerate().map(|(n, p)| temp_path(&p.path, n)));
    let written = crate::par_map(plans.len(), 8, |n| {
        write_temp(&temps[n], plans[n].new.as_bytes(), &plans[n].path)
    });
    if let Some((n, e)) = written
        .into_iter()
        .enumerate()
        .find_map(|(n, r)| r.err().map(|e| (n, e)))
    {
        cleanup(&temps);
        return Err(e.context(format!(
            "{}: cannot write a temporary file beside it; nothing written",
            plans[n].rel
        )));
    }
    for p in plans {
        if let Err(e) = check_unchanged(p) {
            cleanup(&temps);
            return Err(e.context("nothing written"));
        }
    }
    for (n, (p, t)) in plans.iter().zip(&temps).enumerate() {
        if let Err(e) = fs::rename(t, &p.path) {
            cleanup(&temps[n..]);
            let restored = restore(&plans[..n]);
            let what = match restored {
                Ok(()) => "every file already written was restored; nothing changed".to_string(),
                Err(r) => format!("restoring the files already written failed too: {r:#}"),
            };
            return Err(anyhow!(e).context(format!("{}: cannot replace it; {what}", p.rel)));
        }
        if let Some(f) = hooks.after_rename {
            f(n);
        }
    }
    // Make the renames durable: each directory once.
    let mut dirs: Vec<&Path> = plans.iter().filter_map(|p| p.path.parent()).collect();
    dirs.sort();
    dirs.dedup();
    crate::par_map(dirs.len(), 8, |i| sync_dir(dirs[i]));
    Ok(())
}

fn restore(done: &[FilePlan]) -> Result<()> {
    for (n, p) in done.iter().enumerate() {
        let t = temp_path(&p.path, usize::MAX - n);
        write_temp(&t, p.old.as_bytes(), &p.path)
            .and_then(|()| fs::rename(&t, &p.path).map_err(Into::into))
            .with_context(|| format!("{}: cannot restore", p.rel))?;
    }
    Ok(())
}

/// Checks, without changing anything that exists, that the output file `path`
/// (given with `flag`) can be written: an existing file must open for
/// writing; a new one must be creatable (it is created and removed again).
pub fn check_creatable(flag: &str, path: &Path) -> Result<()> {
    let fail = |why: String| anyhow!("{flag} {}: {why}; nothing written", path.display());
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err(fail("is a directory".into())),
        Ok(_) => {
            OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(|e| fail(format!("cannot be written: {e}")))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| fail(format!("cannot be created: {e}")))?;
            let _ = fs::remove_file(path);
        }
        Err(e) => return Err(fail(format!("cannot be checked: {e}"))),
    }
    Ok(())
}

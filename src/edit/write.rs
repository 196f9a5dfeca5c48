//! The one way rebind puts a file on disk.
//!
//! Every file rebind creates or replaces (the rewritten manifests, the
//! `.rebind.yaml` update and `init`, `--review-out`, `--secret-out`, `secret
//! --out`) is written to a temporary file beside its target, fsynced, and
//! renamed over it; a symbolic link or a file with another hard link in the
//! target's place is refused, never written through. Modes: a rewritten
//! manifest, the review and the config keep the target's mode (a new file gets
//! the process default, 0666 less the umask); a cluster Secret is 0600
//! ([`Mode::Private`]) whatever the target had. An output is never one of the
//! files the same run rewrites ([`check_outputs`]).
//!
//! The manifests of one run are written all or none:
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

use crate::edit::rewrite::FilePlan;
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
    if meta.file_type().is_symlink() {
        let to = fs::read_link(&plan.path)
            .map(|t| format!(" (to {})", t.display()))
            .unwrap_or_default();
        bail!(
            "{}: is a symbolic link{to}; rebind never writes through one: rewrite the file it names, or replace the link by the file",
            plan.rel
        );
    }
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

/// Where a written file's permissions come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Mode 0600, whatever the target had: a file that may hold a token.
    Private,
    /// The existing target's mode and, where the process may, its owner and
    /// group; a new file gets the process default (0666 less the umask).
    Keep,
}

/// Opens the new file `path` (never an existing one, never through a link).
fn create_temp(path: &Path, mode: Mode) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    if mode == Mode::Private {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = mode;
    o.open(path)
}

/// Writes `bytes` to the new file `path` and fsyncs it, like [`fill_temp`].
fn write_temp(path: &Path, bytes: &[u8], mode: Mode, like: Option<&fs::Metadata>) -> Result<()> {
    let f = create_temp(path, mode)?;
    fill_temp(f, bytes, mode, like)
}

/// Writes `bytes` to the new file `f`, sets its mode and fsyncs it. With
/// [`Mode::Keep`] and a `like` (the target's metadata), the file takes its
/// mode and, where the process may, its owner and group (else its group
/// alone, else neither: a process may only give a file away as root or to a
/// group it is in). With [`Mode::Private`], exactly 0600.
fn fill_temp(mut f: File, bytes: &[u8], mode: Mode, like: Option<&fs::Metadata>) -> Result<()> {
    f.write_all(bytes)?;
    match (mode, like) {
        (Mode::Keep, Some(meta)) => {
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
        }
        (Mode::Keep, None) => {}
        (Mode::Private, _) => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                f.set_permissions(fs::Permissions::from_mode(0o600))?;
            }
        }
    }
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
    let written = crate::sys::par::par_map(plans.len(), 8, |n| {
        let like = fs::metadata(&plans[n].path)?;
        write_temp(&temps[n], plans[n].new.as_bytes(), Mode::Keep, Some(&like))
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
    crate::sys::par::par_map(dirs.len(), 8, |i| sync_dir(dirs[i]));
    Ok(())
}

fn restore(done: &[FilePlan]) -> Result<()> {
    for (n, p) in done.iter().enumerate() {
        let t = temp_path(&p.path, usize::MAX - n);
        fs::metadata(&p.path)
            .map_err(Into::into)
            .and_then(|like| write_temp(&t, p.old.as_bytes(), Mode::Keep, Some(&like)))
            .and_then(|()| fs::rename(&t, &p.path).map_err(Into::into))
            .with_context(|| format!("{}: cannot restore", p.rel))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// One output file: the review, a cluster Secret, the config `init` writes
// ---------------------------------------------------------------------------

/// What [`write_file`] does when its target already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Replace it whole (it never keeps its bytes; its mode only with
    /// [`Mode::Keep`]).
    Replace,
    /// Refuse: the file is only ever created.
    Refuse,
}

#[cfg(unix)]
fn link_count(m: &fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    m.nlink()
}

#[cfg(not(unix))]
fn link_count(_: &fs::Metadata) -> u64 {
    1
}

/// Checks that a file may be written at `path`, and returns the path it
/// resolves to (every directory component resolved; the final one never
/// followed). Refused: a path that names no file, a directory that does not
/// resolve, and a final component that is a symbolic link, not a regular
/// file, a file with more than one hard link, or a read-only file (as a
/// read-only manifest is never rewritten).
pub fn check_output(path: &Path) -> Result<PathBuf> {
    let shown = path.display();
    let name = match path.file_name() {
        Some(n) if !path.to_string_lossy().ends_with(['/', '\\']) => n,
        _ => bail!("{shown}: not a file name"),
    };
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = parent
        .canonicalize()
        .with_context(|| format!("{shown}: cannot resolve the directory {}", parent.display()))?;
    if !dir.is_dir() {
        bail!("{shown}: {} is not a directory", parent.display());
    }
    let target = dir.join(name);
    match fs::symlink_metadata(&target) {
        Ok(m) if m.file_type().is_symlink() => {
            let to = fs::read_link(&target)
                .map(|t| format!(" (to {})", t.display()))
                .unwrap_or_default();
            bail!("{shown}: is a symbolic link{to}; refusing to write through it (remove it or choose another path)");
        }
        Ok(m) if !m.is_file() => bail!("{shown}: exists and is not a regular file"),
        Ok(m) if link_count(&m) > 1 => bail!(
            "{shown}: has {} hard links; writing it would change the other names too (one may be a file tracked in a repository): remove it or choose another path",
            link_count(&m)
        ),
        Ok(m) if m.permissions().readonly() => {
            bail!("{shown}: is read-only; not replacing it (make it writable, remove it, or choose another path)")
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("{shown}: cannot inspect")),
    }
    Ok(target)
}

/// A new temporary file beside `target` (a free name is looked for).
fn create_unique(target: &Path, mode: Mode) -> std::io::Result<(PathBuf, File)> {
    for n in 0..100 {
        let tmp = temp_path(target, n);
        match create_temp(&tmp, mode) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free temporary file name"))
}

/// Checks, without changing anything that exists, that the output file `path`
/// (given with `flag`) can be written by [`write_file`]: [`check_output`],
/// and its directory takes a new file (a temporary one is created and
/// removed again).
pub fn check_creatable(flag: &str, path: &Path) -> Result<()> {
    let fail = |e: anyhow::Error| anyhow!("{flag} {e:#}; nothing written");
    let target = check_output(path).map_err(fail)?;
    let dir = target.parent().unwrap_or(Path::new("."));
    let (tmp, _) = create_unique(&target, Mode::Private).map_err(|e| {
        fail(anyhow!(
            "{}: cannot be created: cannot create a file in {}: {e}",
            path.display(),
            dir.display()
        ))
    })?;
    let _ = fs::remove_file(tmp);
    Ok(())
}

/// Writes `bytes` to `path` through a temporary file beside it: the path is
/// checked with [`check_output`] and `also` (given the resolved target), the
/// temporary file is written with `mode` and fsynced, both checks run again,
/// and it is renamed over the target (with [`Existing::Refuse`], linked into
/// place only where nothing is). The directory is fsynced last.
pub fn write_file(
    path: &Path,
    bytes: &[u8],
    mode: Mode,
    existing: Existing,
    also: &dyn Fn(&Path) -> Result<()>,
) -> Result<()> {
    let shown = path.display();
    let target = check_output(path)?;
    also(&target)?;
    let like = match fs::symlink_metadata(&target) {
        Ok(_) if existing == Existing::Refuse => {
            bail!("{shown}: already exists; refusing to overwrite it")
        }
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("{shown}: cannot inspect")),
    };
    let dir = target.parent().unwrap_or(Path::new("."));
    let (tmp, file) = create_unique(&target, mode)
        .with_context(|| format!("{shown}: cannot create a file in {}", dir.display()))?;
    let done = (|| -> Result<()> {
        fill_temp(file, bytes, mode, like.as_ref())?;
        // The target may have been swapped for a link since the first check.
        if check_output(path)? != target {
            bail!("{shown}: its directory changed while writing");
        }
        also(&target)?;
        match existing {
            Existing::Replace => fs::rename(&tmp, &target)?,
            Existing::Refuse => place_new(&tmp, &target, path)?,
        }
        Ok(())
    })();
    if let Err(e) = done {
        let _ = fs::remove_file(&tmp);
        return Err(e.context(format!("{shown}: cannot write")));
    }
    sync_dir(dir);
    Ok(())
}

/// Moves `tmp` to `target` only if nothing is there: a hard link fails on
/// any existing name (a symbolic link included), atomically; where the file
/// system has no hard links, a check and a rename.
fn place_new(tmp: &Path, target: &Path, shown: &Path) -> Result<()> {
    let exists = || {
        anyhow!(
            "{}: already exists; refusing to overwrite it",
            shown.display()
        )
    };
    match fs::hard_link(tmp, target) {
        Ok(()) => {
            let _ = fs::remove_file(tmp);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(exists()),
        Err(_) => {
            if fs::symlink_metadata(target).is_ok() {
                return Err(exists());
            }
            fs::rename(tmp, target)?;
            Ok(())
        }
    }
}

// ---------------------------------------------------------------------------
// Outputs that would land on a manifest of the same run
// ---------------------------------------------------------------------------

/// What a path names, as far as it can be told before anything is written:
/// the path with its directories resolved (the final component not
/// followed), the file a symbolic link there leads to (also when it does
/// not exist yet), and the device and inode of an existing file.
struct Identity {
    resolved: Option<PathBuf>,
    linked: Vec<PathBuf>,
    inode: Option<(u64, u64)>,
}

/// `path` with its directories resolved and its last component kept.
fn resolved(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(parent.canonicalize().ok()?.join(name))
}

fn identity(path: &Path) -> Identity {
    let mut linked: Vec<PathBuf> = fs::canonicalize(path).into_iter().collect();
    // A link to a file that does not exist yet (another output, say).
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        let Ok(to) = fs::read_link(&at) else { break };
        at = match at.parent() {
            Some(dir) => dir.join(to),
            None => to,
        };
        linked.extend(resolved(&at));
    }
    #[cfg(unix)]
    let inode = {
        use std::os::unix::fs::MetadataExt;
        fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    };
    #[cfg(not(unix))]
    let inode = None;
    Identity {
        resolved: resolved(path),
        linked,
        inode,
    }
}

impl Identity {
    fn paths(&self) -> impl Iterator<Item = &PathBuf> {
        self.resolved.iter().chain(&self.linked)
    }

    /// How `self` and `other` are the same file, if they are.
    fn same_as(&self, other: &Identity) -> Option<&'static str> {
        if self.resolved.is_some() && self.resolved == other.resolved {
            return Some("the same path");
        }
        if self.paths().any(|p| other.paths().any(|q| p == q)) {
            return Some("through a symbolic link");
        }
        if self.inode.is_some() && self.inode == other.inode {
            return Some("a hard link to it");
        }
        None
    }
}

/// Refuses, before anything is written, an output (`(flag, path)`: the
/// review, the cluster Secret) that is one of the files `planned` rewrites,
/// or the same file as another output (and a planned config that is one of
/// the planned manifests): by the same path however spelt, by
/// its resolved path, through a symbolic link, or by a hard link (same
/// device and inode). Both are named.
pub fn check_outputs(outputs: &[(&str, &Path)], planned: &[FilePlan]) -> Result<()> {
    if outputs.is_empty() && !planned.iter().any(|p| p.is_config) {
        return Ok(());
    }
    let planned_ids: Vec<Identity> = planned.iter().map(|p| identity(&p.path)).collect();
    // The config the run updates is an output too: never one of the manifests.
    for (config, id) in planned
        .iter()
        .zip(&planned_ids)
        .filter(|(p, _)| p.is_config)
    {
        for (plan, mine) in planned.iter().zip(&planned_ids) {
            if plan.is_config {
                continue;
            }
            if let Some(how) = id.same_as(mine) {
                bail!(
                    "the config {} and the manifest {} are the same file ({how}); both would be rewritten: keep them apart; nothing written",
                    config.rel,
                    plan.rel
                );
            }
        }
    }
    if outputs.is_empty() {
        return Ok(());
    }
    let ids: Vec<Identity> = outputs.iter().map(|(_, p)| identity(p)).collect();
    for (plan, mine) in planned.iter().zip(&planned_ids) {
        for ((flag, path), id) in outputs.iter().zip(&ids) {
            if let Some(how) = id.same_as(mine) {
                let what = if plan.is_config {
                    "the config"
                } else {
                    "a manifest"
                };
                bail!(
                    "{flag} {}: is {what} this run rewrites, {} ({how}); writing it there would overwrite the rewrite: choose another path; nothing written",
                    path.display(),
                    plan.rel
                );
            }
        }
    }
    for (i, ((flag, path), id)) in outputs.iter().zip(&ids).enumerate() {
        for ((first_flag, first), first_id) in outputs[..i].iter().zip(&ids) {
            if let Some(how) = id.same_as(first_id) {
                bail!(
                    "{flag} {} and {first_flag} {} are the same file ({how}); give each its own path; nothing written",
                    path.display(),
                    first.display()
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(path: &Path, rel: &str) -> FilePlan {
        FilePlan {
            path: path.to_path_buf(),
            rel: rel.into(),
            old: "a".into(),
            new: "b".into(),
            changes: Vec::new(),
            is_config: false,
        }
    }

    #[cfg(unix)]
    #[test]
    fn modes_private_keep_and_new() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        let none = |_: &Path| Ok(());
        // Private: 0600 even over a world-readable file.
        let s = dir.path().join("secret.yaml");
        fs::write(&s, "old").unwrap();
        fs::set_permissions(&s, fs::Permissions::from_mode(0o644)).unwrap();
        write_file(&s, b"new", Mode::Private, Existing::Replace, &none).unwrap();
        assert_eq!((mode(&s), fs::read(&s).unwrap()), (0o600, b"new".to_vec()));
        // Keep: the target's own mode.
        let r = dir.path().join("review.md");
        fs::write(&r, "old").unwrap();
        fs::set_permissions(&r, fs::Permissions::from_mode(0o640)).unwrap();
        write_file(&r, b"new", Mode::Keep, Existing::Replace, &none).unwrap();
        assert_eq!((mode(&r), fs::read(&r).unwrap()), (0o640, b"new".to_vec()));
        // Refuse: created once, never replaced, nothing left behind.
        let c = dir.path().join("config.yaml");
        write_file(&c, b"one", Mode::Keep, Existing::Refuse, &none).unwrap();
        let e = write_file(&c, b"two", Mode::Keep, Existing::Refuse, &none).unwrap_err();
        assert!(format!("{e:#}").contains("already exists"), "{e:#}");
        assert_eq!(fs::read(&c).unwrap(), b"one");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
        // `also` refusing stops the write.
        let e = write_file(&r, b"x", Mode::Keep, Existing::Replace, &|_| bail!("no")).unwrap_err();
        assert!(format!("{e:#}").contains("no"));
        assert_eq!(fs::read(&r).unwrap(), b"new");
    }

    #[cfg(unix)]
    #[test]
    fn links_are_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("victim"), "keep").unwrap();
        std::os::unix::fs::symlink(d.join("victim"), d.join("link")).unwrap();
        std::os::unix::fs::symlink(d.join("nowhere"), d.join("dangling")).unwrap();
        fs::hard_link(d.join("victim"), d.join("hard")).unwrap();
        for (name, why) in [
            ("link", "is a symbolic link"),
            ("dangling", "is a symbolic link"),
            ("hard", "has 2 hard links"),
        ] {
            for existing in [Existing::Replace, Existing::Refuse] {
                let e =
                    write_file(&d.join(name), b"x", Mode::Keep, existing, &|_| Ok(())).unwrap_err();
                assert!(format!("{e:#}").contains(why), "{name}: {e:#}");
            }
            let e = check_creatable("--flag", &d.join(name)).unwrap_err();
            assert!(format!("{e:#}").starts_with("--flag "), "{e:#}");
        }
        assert_eq!(fs::read(d.join("victim")).unwrap(), b"keep");
        assert!(!d.join("nowhere").exists());
    }

    #[cfg(unix)]
    #[test]
    fn outputs_on_planned_files_or_on_each_other_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::create_dir(d.join("sub")).unwrap();
        fs::write(d.join("sub/app.yaml"), "a").unwrap();
        fs::write(d.join("sub/other.yaml"), "a").unwrap();
        let planned = [plan(&d.join("sub/app.yaml"), "sub/app.yaml")];
        std::os::unix::fs::symlink(d.join("sub"), d.join("dirlink")).unwrap();
        std::os::unix::fs::symlink("sub/app.yaml", d.join("filelink")).unwrap();
        fs::hard_link(d.join("sub/app.yaml"), d.join("hard")).unwrap();
        for (p, how) in [
            (d.join("sub/app.yaml"), "the same path"),
            (d.join("sub/./../sub/app.yaml"), "the same path"),
            (d.join("dirlink/app.yaml"), "the same path"),
            (d.join("filelink"), "through a symbolic link"),
            (d.join("hard"), "a hard link to it"),
        ] {
            let e = check_outputs(&[("--review-out", &p)], &planned).unwrap_err();
            let e = format!("{e:#}");
            assert!(e.contains(how) && e.contains("sub/app.yaml"), "{p:?}: {e}");
        }
        // A config that is one of the manifests (a hard link).
        let mut config = plan(&d.join("hard"), ".rebind.yaml");
        config.is_config = true;
        let e = check_outputs(&[], &[planned[0].clone(), config]).unwrap_err();
        assert!(
            format!("{e:#}").contains("the config .rebind.yaml and the manifest sub/app.yaml"),
            "{e:#}"
        );
        let free = d.join("sub/review.md");
        let other = d.join("sub/other.yaml");
        check_outputs(
            &[("--review-out", &free), ("--secret-out", &other)],
            &planned,
        )
        .unwrap();
        // Two outputs, one not existing yet, one a link to it.
        std::os::unix::fs::symlink("review.md", d.join("sub/to-review")).unwrap();
        for second in [free.clone(), d.join("sub/to-review")] {
            let e = check_outputs(&[("--review-out", &free), ("--secret-out", &second)], &[])
                .unwrap_err();
            assert!(format!("{e:#}").contains("are the same file"), "{e:#}");
        }
    }
}

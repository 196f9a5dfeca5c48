//! Putting verified plans on disk: all files or none.
//!
//! 1. Every target is checked first: still a regular file, writable, and
//!    byte-for-byte what was planned from (a file changed since is an error).
//! 2. Each new text goes to a temporary file in the target's directory, with
//!    the target's permissions, and is fsynced.
//! 3. The targets are checked once more, then each temporary file is renamed
//!    over its target. If a rename fails, the files already renamed get their
//!    old bytes back the same way, so the run leaves every file as it was.

use crate::rewrite::FilePlan;
use anyhow::{anyhow, bail, Context, Result};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Environment variable for tests: milliseconds to sleep after each rename.
pub const SLOW_ENV: &str = "REBIND_TEST_SLOW_WRITE_MS";
/// Environment variable for tests: a path `P`; once planning is done, rebind
/// creates `P.ready` and waits (up to 60 s) for `P.go` before it writes.
pub const PAUSE_ENV: &str = "REBIND_TEST_PAUSE_BEFORE_WRITE";

fn test_pause() {
    let Some(p) = std::env::var_os(PAUSE_ENV) else {
        return;
    };
    let p = PathBuf::from(p);
    let _ = fs::write(p.with_extension("ready"), b"");
    let go = p.with_extension("go");
    for _ in 0..6000 {
        if go.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

fn temp_path(target: &Path, n: usize) -> PathBuf {
    let name = target
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.rebind-{}-{n}.tmp", std::process::id()))
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

fn write_temp(path: &Path, bytes: &[u8], like: &Path) -> Result<()> {
    let perms = fs::metadata(like)?.permissions();
    let mut f = OpenOptions::new().write(true).create_new(true).open(path)?;
    f.write_all(bytes)?;
    f.set_permissions(perms)?;
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
    test_pause();
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
    let slow = std::env::var(SLOW_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok());
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
        if let Some(ms) = slow {
            std::thread::sleep(std::time::Duration::from_millis(ms));
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

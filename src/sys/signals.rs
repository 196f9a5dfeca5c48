//! SIGINT, SIGTERM and SIGHUP: a run either ends at once with nothing
//! written, or finishes (or undoes) what it started before it exits.
//!
//! [`install`] starts a thread that receives the three signals (through
//! `signal-hook`, which keeps the handler itself async-signal-safe: the
//! handler only wakes that thread). What the thread does depends on the phase:
//!
//! - Before the first write (planning, the checks, the `[y/N]` prompt) the
//!   run has nothing to undo: the thread removes the files the run created
//!   and still holds (the index lock, a temporary key file: see [`create`])
//!   and exits with `128 + signal` (130 for SIGINT, 143 for SIGTERM, 129 for
//!   SIGHUP), as shells expect of a process a signal ended.
//! - From [`enter_critical`] on (the first write is about to happen) the
//!   thread only records the signal. The run checks [`stop_requested`] at
//!   each step and fails there with [`Interrupted`], which takes the same
//!   restore path as any failure; the binary then exits with `128 + signal`.
//!
//! Without [`install`] (the library used on its own, tests) no signal is
//! caught and [`stop_requested`] stays `None`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

/// The first signal received in the critical phase (0: none).
static STOP: AtomicI32 = AtomicI32::new(0);

struct State {
    /// A write may have happened: signals are recorded, not acted on.
    critical: bool,
    /// Files the run created and removes itself (removed on a signal too).
    files: Vec<PathBuf>,
}

static STATE: Mutex<State> = Mutex::new(State {
    critical: false,
    files: Vec::new(),
});

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The signal's usual name.
pub fn name(signal: i32) -> String {
    match signal {
        signal_hook::consts::SIGINT => "SIGINT".into(),
        signal_hook::consts::SIGTERM => "SIGTERM".into(),
        signal_hook::consts::SIGHUP => "SIGHUP".into(),
        n => format!("signal {n}"),
    }
}

/// The run was stopped by a signal; the binary exits with [`Interrupted::exit_code`].
#[derive(Debug, Clone, Copy)]
pub struct Interrupted(pub i32);

impl Interrupted {
    /// `128 + signal`, as shells report a process a signal ended.
    pub fn exit_code(&self) -> u8 {
        (128 + self.0).clamp(0, 255) as u8
    }
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "interrupted by {}", name(self.0))
    }
}

impl std::error::Error for Interrupted {}

/// How the signal thread tells the user what it does (the binary's stderr;
/// it must not panic on a closed stream: a panic there would leave the
/// signal unanswered).
static SAY: std::sync::OnceLock<fn(&str)> = std::sync::OnceLock::new();

fn say(message: &str) {
    if let Some(f) = SAY.get() {
        f(message);
    }
}

/// Catches SIGINT, SIGTERM and SIGHUP for the rest of the process (see the
/// module documentation); `say` prints the one line the signal thread has
/// to say.
pub fn install(say: fn(&str)) -> std::io::Result<()> {
    let _ = SAY.set(say);
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                on_signal(signal);
            }
        })?;
    Ok(())
}

fn on_signal(signal: i32) {
    // Held until the process ends: no new file or phase change meanwhile.
    let st = state();
    if !st.critical {
        for f in &st.files {
            let _ = std::fs::remove_file(f);
        }
        say(&format!("{}; nothing written", Interrupted(signal)));
        std::process::exit(i32::from(Interrupted(signal).exit_code()));
    }
    if STOP
        .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        say(&format!(
            "{} received: finishing the current step, then stopping (restoring what was written, if the change is not complete)",
            name(signal)
        ));
    }
}

/// The first signal received since [`enter_critical`], if any.
pub fn stop_requested() -> Option<i32> {
    match STOP.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// An [`Interrupted`] error when a signal asked the run to stop.
pub fn check() -> Result<(), Interrupted> {
    match stop_requested() {
        Some(s) => Err(Interrupted(s)),
        None => Ok(()),
    }
}

/// From here on a signal no longer ends the process: the run stops at its
/// next [`check`] and restores (or finishes) what it started.
pub fn enter_critical() {
    state().critical = true;
}

/// Creates the file `path` with `make` and records it, so that a signal
/// before the first write removes it; [`remove`] removes it and forgets it.
/// Creating and recording are one step as far as signals go.
pub fn create<T>(path: &Path, make: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    let mut st = state();
    let made = make()?;
    st.files.push(path.to_path_buf());
    Ok(made)
}

/// Removes a file made by [`create`] and forgets it.
pub fn remove(path: &Path) {
    let mut st = state();
    let _ = std::fs::remove_file(path);
    if let Some(i) = st.files.iter().position(|f| f == path) {
        st.files.swap_remove(i);
    }
}

/// A fixed point of the run where a test may pause it to send it a signal.
/// Compiled only into debug builds (the test builds): what users install
/// has no such hook and reads no variable for it.
#[cfg(not(debug_assertions))]
#[inline(always)]
pub fn pause_point(_step: &str) {}

/// A fixed point of the run where a test may pause it to send it a signal:
/// when `REBIND_TEST_PAUSE_AT` names `step`, creates the file
/// `REBIND_TEST_PAUSE_FILE` names and waits (up to a minute) for a signal.
/// Does nothing otherwise. Debug builds only (see the release twin above).
#[cfg(debug_assertions)]
pub fn pause_point(step: &str) {
    if std::env::var("REBIND_TEST_PAUSE_AT").ok().as_deref() != Some(step) {
        return;
    }
    if let Some(file) = std::env::var_os("REBIND_TEST_PAUSE_FILE") {
        let _ = std::fs::write(file, step);
    }
    let start = std::time::Instant::now();
    while stop_requested().is_none() && start.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_what_shells_report() {
        assert_eq!(Interrupted(signal_hook::consts::SIGINT).exit_code(), 130);
        assert_eq!(Interrupted(signal_hook::consts::SIGTERM).exit_code(), 143);
        assert_eq!(Interrupted(signal_hook::consts::SIGHUP).exit_code(), 129);
        assert_eq!(
            Interrupted(signal_hook::consts::SIGTERM).to_string(),
            "interrupted by SIGTERM"
        );
    }

    #[test]
    fn created_files_are_recorded_until_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("lock");
        create(&p, || std::fs::File::create(&p)).unwrap();
        assert!(state().files.contains(&p));
        remove(&p);
        assert!(!p.exists());
        assert!(!state().files.contains(&p));
    }
}

//! The help text, the shell completions and the man page: every command's
//! `--help` ends with real examples and its exit codes; the completion
//! scripts parse in their shells; the man pages render.

use crate::common::*;
use std::path::Path;
use std::process::{Command, Stdio};

/// The subcommands `rebind --help` lists (so a new one is covered too).
fn commands() -> Vec<String> {
    let o = rebind(Path::new("."), &["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let help = stdout(&o);
    let list = help
        .split("Commands:\n")
        .nth(1)
        .expect("a Commands: section")
        .split("\n\n")
        .next()
        .unwrap();
    let names: Vec<String> = list
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect();
    for want in [
        "scan",
        "diff",
        "apply",
        "secret",
        "init",
        "check",
        "completions",
        "man",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    names
}

/// The `Examples:` lines of a help text that run rebind, without comments.
fn examples(help: &str) -> Vec<String> {
    let section = help
        .split("Examples:\n")
        .nth(1)
        .unwrap_or_default()
        .split("\n\n")
        .next()
        .unwrap();
    section
        .lines()
        .map(|l| l.split(" # ").next().unwrap().trim().to_string())
        .filter(|l| !l.starts_with('#') && !l.starts_with('('))
        .filter(|l| l.starts_with("rebind ") || l.contains(" rebind "))
        .collect()
}

#[test]
fn every_help_ends_with_examples_and_exit_codes() {
    let mut all = vec![vec![]];
    all.extend(commands().into_iter().map(|c| vec![c]));
    for cmd in all {
        for flag in ["--help", "-h"] {
            let mut args: Vec<&str> = cmd.iter().map(String::as_str).collect();
            args.push(flag);
            let o = rebind(Path::new("."), &args);
            assert_eq!(o.status.code(), Some(0), "{args:?}");
            let help = stdout(&o);
            let ex = help
                .find("\nExamples:\n")
                .unwrap_or_else(|| panic!("{args:?}: no Examples:\n{help}"));
            let codes = help
                .find("\nExit codes:\n")
                .unwrap_or_else(|| panic!("{args:?}: no Exit codes:\n{help}"));
            assert!(ex < codes, "{args:?}: examples come before the exit codes");
            let options = help.find("Options:").expect("an Options: section");
            assert!(options < ex, "{args:?}: the examples end the help");
            // Each exit code line is `  N  meaning`, 0 first.
            let code_lines: Vec<&str> = help[codes..].lines().skip(2).collect();
            assert!(
                code_lines[0].starts_with("  0  "),
                "{args:?}: {code_lines:?}"
            );
            assert!(
                code_lines
                    .iter()
                    .all(|l| l.len() > 5 && l[2..3].parse::<u8>().is_ok() && l.starts_with("  ")),
                "{args:?}: {code_lines:?}"
            );
            let n = examples(&help).len();
            assert!((2..=4).contains(&n), "{args:?}: {n} examples\n{help}");
        }
    }
}

#[test]
fn help_examples_use_real_flags() {
    for cmd in commands() {
        let o = rebind(Path::new("."), &[&cmd, "--help"]);
        let help = stdout(&o);
        for ex in examples(&help) {
            // The command an example runs, and its flags.
            let words: Vec<&str> = ex.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "rebind").unwrap();
            let sub = words.get(at + 1).copied().unwrap_or("");
            let sub = sub.trim_end_matches(';');
            assert!(
                commands().iter().any(|c| c == sub),
                "{cmd}: `{ex}` runs an unknown command {sub}"
            );
            let sub_help = stdout(&rebind(Path::new("."), &[sub, "--help"]));
            for w in &words[at + 2..] {
                if matches!(*w, "|" | ">" | "&&" | "||" | ";") {
                    break;
                }
                if w.starts_with("--") {
                    let flag = w.split('=').next().unwrap();
                    assert!(
                        sub_help.contains(&format!("{flag} "))
                            || sub_help.contains(&format!("{flag}\n")),
                        "{cmd}: `{ex}` uses {flag}, which `rebind {sub}` does not have"
                    );
                }
            }
        }
    }
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn completions_parse_in_their_shells() {
    let dir = tempfile::tempdir().unwrap();
    // (shell, the checker that parses without running, its arguments)
    let shells: [(&str, &str, &[&str]); 5] = [
        ("bash", "bash", &["-n"]),
        ("zsh", "zsh", &["-n"]),
        ("fish", "fish", &["--no-execute"]),
        ("powershell", "pwsh", &[]),
        ("elvish", "elvish", &["-compileonly"]),
    ];
    for (shell, checker, args) in shells {
        let o = rebind(Path::new("."), &["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        let script = stdout(&o);
        // The commands and the flags are in it (fish spells flags `-l NAME`).
        for word in [
            "scan",
            "diff",
            "apply",
            "check",
            "expect-from-audit",
            "format",
        ] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
        let file = dir.path().join(format!("rebind.{shell}"));
        std::fs::write(&file, &script).unwrap();
        if !have(checker) {
            println!("{shell}: not parsed: {checker} is not installed");
            continue;
        }
        let mut cmd = Command::new(checker);
        if checker == "pwsh" {
            cmd.args([
                "-NoProfile",
                "-Command",
                &format!(
                    "$e=$null; [void][System.Management.Automation.Language.Parser]::ParseFile('{}',[ref]$null,[ref]$e); if ($e) {{ $e; exit 1 }}",
                    file.display()
                ),
            ]);
        } else {
            cmd.args(args).arg(&file);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{shell}: {checker} rejects the script: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let o = rebind(Path::new("."), &["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn bash_completion_completes_commands_and_flags() {
    if !have("bash") {
        skip(
            "cli_help::bash_completion_completes_commands_and_flags",
            "bash is not installed",
        );
        return;
    }
    let script = stdout(&rebind(Path::new("."), &["completions", "bash"]));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rebind.bash");
    std::fs::write(&file, script).unwrap();
    // Ask the completion function what follows `rebind ap` and `rebind apply --exp`.
    let probe = format!(
        r#"source '{}'
complete_for() {{ COMP_WORDS=("$@"); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ));
  COMP_LINE="${{COMP_WORDS[*]}}"; COMP_POINT=${{#COMP_LINE}}; COMPREPLY=();
  _rebind rebind "${{COMP_WORDS[-1]}}" "${{COMP_WORDS[-2]}}"; printf '%s\n' "${{COMPREPLY[@]}}"; }}
complete_for rebind ap
echo --
complete_for rebind apply --expect"#,
        file.display()
    );
    let o = Command::new("bash").args(["-c", &probe]).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let (first, second) = out.split_once("--\n").unwrap_or((&out, ""));
    assert_eq!(first.trim(), "apply", "{out}");
    let mut flags: Vec<&str> = second.split_whitespace().collect();
    flags.sort();
    assert_eq!(
        flags,
        [
            "--expect-files",
            "--expect-from-audit",
            "--expect-occurrences"
        ],
        "{out}"
    );
}

#[test]
fn man_pages_have_the_sections_and_render() {
    let mut pages = vec![(None, "rebind".to_string())];
    pages.extend(
        commands()
            .into_iter()
            .map(|c| (Some(c.clone()), format!("rebind-{c}"))),
    );
    for (cmd, title) in pages {
        let mut args = vec!["man"];
        if let Some(c) = &cmd {
            args.push(c);
        }
        let o = rebind(Path::new("."), &args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let roff = stdout(&o);
        assert!(
            roff.lines()
                .any(|l| l.starts_with(&format!(".TH {title} 1 "))),
            "{title}: no .TH line"
        );
        for section in [".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH OPTIONS"] {
            assert!(roff.contains(section), "{title}: no {section}");
        }
        assert!(roff.contains(&title.replace('-', "\\-")), "{title}");
        if !have("groff") {
            println!("{title}: not rendered: groff is not installed");
            continue;
        }
        let mut child = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), roff.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{title}: groff failed");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.trim().is_empty(), "{title}: groff warns: {err}");
        // Rendered text, with groff's bold/underline overstrikes removed.
        let text = String::from_utf8_lossy(&out.stdout);
        let mut plain = String::new();
        for c in text.chars() {
            if c == '\u{8}' {
                plain.pop();
            } else {
                plain.push(c);
            }
        }
        for want in ["NAME", "SYNOPSIS", "Examples:", "Exit codes:"] {
            assert!(plain.contains(want), "{title}: rendered page has no {want}");
        }
    }
    let o = rebind(Path::new("."), &["man", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no such command"), "{}", stderr(&o));
}

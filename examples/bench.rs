//! Benchmark: rebind against the usual tools on a generated app-of-apps repo.
//!
//! ```sh
//! apt-get install ripgrep         # the rg yardstick (skipped when missing)
//! pip install ruamel.yaml         # the format-aware yardstick (skipped when missing)
//! cargo run --release --example bench -- [--files 20000] [--runs 5] [--dir DIR]
//! cargo run --release --example bench -- --files 80000 --runs 3   # memory stays flat
//! cargo run --release --example bench -- --files 2000 --commit-files 20000   # git flow vs files
//! ```
//!
//! The two `5000 files` rows time `apply` on a second repository (git
//! initialised, every file holding the old endpoint), with `--no-commit` and
//! with the git flow (stage, commit, branch): the git flow's cost over
//! `--no-commit` should grow in step with the number of files
//! (`--commit-files N`, 0 skips them).
//!
//! The `parse-only` row is this program run as `bench --parse-only DIR`: the
//! parse floor (every candidate file's yaml-rust2 events pulled on all cores,
//! nothing else). The last lines print the three ratios the project tracks:
//! `scan` / parse-only, `diff` / `rg -F -l -i`, `apply --no-commit` / the
//! `rg | xargs sed -i` pipeline.
//!
//! Generates the repo deterministically (Applications with Helm values,
//! ApplicationSets, AppProjects, Korean comments; in-cluster, stage and prod
//! endpoints; 1 file in 50 holds the prod endpoint), warms the page cache, then
//! runs every command several times and prints the median wall time, the ratio
//! to `rg -F -l`, and rebind's peak memory.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const OLD: &str = "https://5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com";
const OLD_HOST: &str = "5F2C8A1E9B3D4C7A8E6F1B2D3C4A5E6F.gr7.ap-northeast-2.eks.amazonaws.com";
const NEW: &str = "https://0D1E2F3A4B5C6D7E8F9A0B1C2D3E4F5A.gr7.ap-northeast-2.eks.amazonaws.com";
const STAGE: &str = "https://A1B2C3D4E5F60718293A4B5C6D7E8F90.yl4.ap-northeast-2.eks.amazonaws.com";
const IN_CLUSTER: &str = "https://kubernetes.default.svc";

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn application(i: usize, server: &str, rng: &mut Rng) -> String {
    let mut values = String::new();
    for k in 0..(14 + rng.below(24)) {
        values.push_str(&format!("        key{k}: value-{}\n", rng.below(100_000)));
    }
    format!(
        "# 애플리케이션 {i}: 팀 플랫폼이 관리합니다\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: app-{i}\n  namespace: argocd\n  labels: {{team: platform, tier: \"{}\"}}\nspec:\n  project: platform\n  source:\n    repoURL: https://github.com/example/platform-gitops.git\n    targetRevision: main\n    path: charts/app-{i}\n    helm:\n      releaseName: app-{i}\n      values: |\n{values}  destination:\n    server: {server}  # 대상 클러스터\n    namespace: ns-{i}\n  syncPolicy:\n    automated: {{prune: true, selfHeal: true}}\n",
        rng.below(3)
    )
}

fn appset(i: usize, server: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: set-{i}\nspec:\n  generators:\n    - list:\n        elements:\n          - cluster: finance-a\n            url: '{server}'\n          - cluster: finance-stage\n            url: {STAGE}\n  template:\n    metadata:\n      name: 'set-{i}-{{{{cluster}}}}'\n    spec:\n      project: platform\n      source:\n        repoURL: https://github.com/example/platform-gitops.git\n        path: sets/{i}\n      destination:\n        server: '{{{{url}}}}'\n        namespace: set-{i}\n"
    )
}

fn project(i: usize, server: &str) -> String {
    format!(
        "# 프로젝트 {i}\napiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: proj-{i}\nspec:\n  sourceRepos: ['*']\n  destinations:\n    - server: \"{server}\"\n      namespace: '*'\n    - server: {IN_CLUSTER}\n      namespace: proj-{i}\n"
    )
}

/// Writes `files` manifests under `dir`; 1 in 50 holds OLD. Returns total bytes.
fn generate(dir: &Path, files: usize) -> u64 {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut total = 0;
    for i in 0..files {
        let server = if i % 50 == 7 {
            OLD
        } else {
            [IN_CLUSTER, STAGE, IN_CLUSTER, "https://10.20.30.40:6443"][rng.below(4) as usize]
        };
        let (sub, text) = match rng.below(10) {
            0 => ("sets", appset(i, server)),
            1 => ("projects", project(i, server)),
            _ => ("apps", application(i, server, &mut rng)),
        };
        let d = dir.join(sub).join(format!("group-{:03}", i % 400));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("m-{i:05}.yaml")), &text).unwrap();
        total += text.len() as u64;
    }
    total
}

fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn have(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs a shell command; returns wall time, the child's peak RSS in KiB and
/// the CPU time (user + system) it and its children used. Panics when the
/// command fails.
fn time(script: &str, cwd: &Path) -> (Duration, u64, Duration) {
    let start = Instant::now();
    let mut child = Command::new("bash")
        .args(["-c", script])
        .current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child and fills the structs we pass.
    unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    let elapsed = start.elapsed();
    let _ = child.wait(); // already reaped by wait4; keeps the Child's bookkeeping honest
                          // A command that fails is not measured: its time would mean nothing.
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "`{script}` failed (wait status {status}); run it by hand in {}",
        cwd.display()
    );
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (
        elapsed,
        ru.ru_maxrss as u64,
        tv(ru.ru_utime) + tv(ru.ru_stime),
    )
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

struct Row {
    name: String,
    median: Duration,
    rss_kib: u64,
    /// The median CPU time (user + system): what a busy machine's wall
    /// time hides (waiting for a core or for the disk).
    cpu: Duration,
}

/// The parse floor: every candidate file a scan would parse (a YAML file
/// holding a URL or a destination), read and its yaml-rust2 events pulled on
/// all cores, nothing else.
fn parse_only(dir: &Path) {
    let files = walk_files(dir);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let events = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(p) = files.get(i) else { break };
                let Ok(text) = std::fs::read_to_string(p) else {
                    continue;
                };
                let lower = text.to_ascii_lowercase();
                if !(lower.contains("https://") || lower.contains("destination")) {
                    continue;
                }
                let mut parser = yaml_rust2::parser::Parser::new_from_str(&text);
                let mut n = 0;
                while let Ok((ev, _)) = parser.next_token() {
                    n += 1;
                    if ev == yaml_rust2::parser::Event::StreamEnd {
                        break;
                    }
                }
                events.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            });
        }
    });
    println!("{} events", events.into_inner());
}

fn main() {
    if let Some(dir) = std::env::args()
        .nth(2)
        .filter(|_| std::env::args().nth(1).as_deref() == Some("--parse-only"))
    {
        parse_only(Path::new(&dir));
        return;
    }
    let mut files = 20_000;
    let mut runs = 5;
    let mut dir: Option<PathBuf> = None;
    let mut commit_files = 5_000;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--files" => files = args.next().and_then(|v| v.parse().ok()).expect("--files N"),
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            "--dir" => dir = args.next().map(PathBuf::from),
            "--commit-files" => {
                commit_files = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--commit-files N")
            }
            other => panic!("unknown argument {other}; see the doc comment of examples/bench.rs"),
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let base = dir.unwrap_or_else(|| tmp.path().to_path_buf());
    let repo = base.join("repo");
    let _ = std::fs::remove_dir_all(&repo);
    let bytes = generate(&repo, files);
    std::fs::write(
        repo.join(".rebind.yaml"),
        format!("clusters:\n  finance-prod:\n    endpoint: {NEW}\n    retired: [{OLD}]\n  finance-stage:\n    endpoint: {STAGE}\n  lab:\n    endpoint: https://10.20.30.40:6443\n"),
    )
    .unwrap();
    let rebind = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("rebind");
    assert!(
        rebind.exists(),
        "build the binary first: cargo build --release"
    );
    let rb = rebind.display();
    println!(
        "repo: {files} files, {:.1} MB, 1 in 50 holding the old endpoint; {runs} runs each, median wall time",
        bytes as f64 / 1e6
    );
    // Warm the page cache.
    let _ = time(
        &format!(
            "find {} -type f -exec cat {{}} + > /dev/null",
            repo.display()
        ),
        &base,
    );

    let mut rows: Vec<Row> = Vec::new();
    let mut bench = |name: &str, script: String, setup: Option<&dyn Fn()>| {
        let (mut times, mut cpus) = (Vec::new(), Vec::new());
        let mut rss = 0;
        for _ in 0..runs {
            if let Some(s) = setup {
                s();
            }
            let (t, r, c) = time(&script, &base);
            times.push(t);
            cpus.push(c);
            rss = rss.max(r);
        }
        rows.push(Row {
            name: name.to_string(),
            median: median(times),
            rss_kib: rss,
            cpu: median(cpus),
        });
    };
    let copy = base.join("copy");
    let fresh_copy = || {
        let _ = std::fs::remove_dir_all(&copy);
        let st = Command::new("cp")
            .args(["-r"])
            .arg(&repo)
            .arg(&copy)
            .status()
            .unwrap();
        assert!(st.success());
        // The copy's dirty pages are written out before the clock starts:
        // otherwise the first fsync of a timed command pays for them.
        assert!(Command::new("sync").status().unwrap().success());
    };
    let has_rg = have("rg", &["--version"]);
    let me = std::env::current_exe().unwrap();
    bench(
        "parse-only (yaml-rust2 events, all cores)",
        format!("{} --parse-only repo", me.display()),
        None,
    );
    if has_rg {
        bench("rg -F -l OLD", format!("rg -F -l {OLD_HOST} repo"), None);
        bench(
            "rg -F -l -i OLD",
            format!("rg -F -l -i {OLD_HOST} repo"),
            None,
        );
    } else {
        println!("rg not installed: skipping the rg yardsticks (apt-get install ripgrep)");
    }
    bench(
        "rebind diff --from OLD --to NEW",
        // Exit 1: changes pending, as expected.
        format!("{rb} diff --from {OLD} --to {NEW} repo || [ $? -eq 1 ]"),
        None,
    );
    bench("rebind scan", format!("{rb} scan repo"), None);
    // Ten files that hold the retired endpoint, named as pre-commit would.
    // Listed by a child process: a child's peak RSS counts the pages it
    // shares with this process when forked, so this process stays small
    // (holding every path here added 5 MB to later rows at 80 000 files).
    let listing = Command::new("bash")
        .args([
            "-c",
            &format!("grep -rlF {OLD_HOST} repo | sort | head -10"),
        ])
        .current_dir(&base)
        .output()
        .unwrap();
    let ten: Vec<String> = String::from_utf8_lossy(&listing.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(ten.len(), 10, "ten files holding the old endpoint");
    bench(
        "rebind check (10 files)",
        format!(
            "{rb} check --config repo/.rebind.yaml {} || [ $? -eq 1 ]",
            ten.join(" ")
        ),
        None,
    );
    if has_rg && have("sed", &["--version"]) {
        bench(
            "rg -l OLD | xargs sed -i",
            format!("cd copy && rg -F -l {OLD_HOST} . | xargs sed -i 's#{OLD}#{NEW}#g'"),
            Some(&fresh_copy),
        );
    }
    bench(
        "rebind apply --no-commit --yes",
        format!("{rb} apply --no-commit --yes --from {OLD} --to {NEW} copy"),
        Some(&fresh_copy),
    );
    // The git flow against --no-commit on the same tree: a repository where
    // every one of --commit-files files holds the old endpoint (so all of
    // them are rewritten, staged and committed).
    if commit_files > 0 && have("git", &["--version"]) {
        let crepo = base.join("commit-repo");
        let _ = std::fs::remove_dir_all(&crepo);
        for i in 0..commit_files {
            let d = crepo.join(format!("apps/team-{}", i % 50));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join(format!("app-{i}.yaml")),
                format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: app-{i}\nspec:\n  destination:\n    server: {OLD}\n    namespace: ns-{i}\n"),
            )
            .unwrap();
        }
        let git = |args: &[&str]| {
            let st = Command::new("git")
                .args([
                    "-c",
                    "user.name=bench",
                    "-c",
                    "user.email=bench@example.com",
                ])
                .args(args)
                .current_dir(&crepo)
                .stdout(Stdio::null())
                .status()
                .unwrap();
            assert!(st.success(), "git {args:?}");
        };
        git(&["init", "-q", "-b", "main"]);
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "base"]);
        let ccopy = base.join("commit-copy");
        let fresh = || {
            let _ = std::fs::remove_dir_all(&ccopy);
            let st = Command::new("cp")
                .args(["-a"])
                .arg(&crepo)
                .arg(&ccopy)
                .status()
                .unwrap();
            assert!(st.success());
            assert!(Command::new("sync").status().unwrap().success());
        };
        let who = "GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com";
        bench(
            &format!("rebind apply --no-commit --yes ({commit_files} files rewritten)"),
            format!("cd commit-copy && {rb} apply --no-commit --yes --from {OLD} --to {NEW}"),
            Some(&fresh),
        );
        bench(
            &format!("rebind apply --yes, git flow ({commit_files} files committed)"),
            format!("cd commit-copy && {who} {rb} apply --yes --from {OLD} --to {NEW}"),
            Some(&fresh),
        );
        let _ = std::fs::remove_dir_all(&ccopy);
    }
    if have("python3", &["-c", "import ruamel.yaml"]) {
        let py = format!(
            "import os, sys\nfrom ruamel.yaml import YAML\ny = YAML()\ny.preserve_quotes = True\nfor root, _, names in os.walk('copy'):\n    for n in names:\n        p = os.path.join(root, n)\n        if not n.endswith('.yaml'):\n            continue\n        with open(p) as f:\n            docs = list(y.load_all(f))\n        s = open(p).read()\n        if '{OLD_HOST}' not in s:\n            continue\n        import io\n        out = io.StringIO()\n        y.dump_all(docs, out)\n        open(p, 'w').write(out.getvalue().replace('{OLD}', '{NEW}'))\n"
        );
        std::fs::write(base.join("ruamel_rebind.py"), py).unwrap();
        // One run: it takes about a minute.
        fresh_copy();
        let (t, r, c) = time("python3 ruamel_rebind.py", &base);
        rows.push(Row {
            name: "ruamel.yaml round-trip (1 run)".into(),
            median: t,
            rss_kib: r,
            cpu: c,
        });
    } else {
        println!("ruamel.yaml not installed: skipping it (pip install ruamel.yaml)");
    }
    let rg = rows
        .iter()
        .find(|r| r.name.starts_with("rg -F"))
        .map(|r| r.median);
    println!("\n| command | median | vs rg -F -l | peak RSS | CPU |\n| --- | ---: | ---: | ---: | ---: |");
    for r in &rows {
        let ratio = rg.map_or("-".to_string(), |rg| {
            format!("{:.2}x", r.median.as_secs_f64() / rg.as_secs_f64())
        });
        println!(
            "| {} | {:.1} ms | {} | {:.1} MB | {:.1} ms |",
            r.name,
            r.median.as_secs_f64() * 1e3,
            ratio,
            r.rss_kib as f64 / 1024.0,
            r.cpu.as_secs_f64() * 1e3
        );
    }
    let find = |prefix: &str| {
        rows.iter()
            .find(|r| r.name.starts_with(prefix))
            .map(|r| r.median.as_secs_f64())
    };
    println!();
    for (what, a, b, target) in [
        ("scan / parse-only", "rebind scan", "parse-only", 1.3),
        ("diff / rg -F -l -i", "rebind diff", "rg -F -l -i", 1.5),
        ("apply / rg | sed", "rebind apply", "rg -l OLD | xargs", 1.5),
    ] {
        if let (Some(a), Some(b)) = (find(a), find(b)) {
            let r = a / b;
            let verdict = if r <= target { "met" } else { "NOT met" };
            println!("{what}: {r:.2}x (target {target}x: {verdict})");
        }
    }
    // The git flow's own cost (staging, committing, the branch) over the
    // same rewrite without it, per committed file: flat as the number of
    // files grows when the flow is linear (`--commit-files N`).
    let row = |prefix: &str| rows.iter().find(|r| r.name.starts_with(prefix));
    if let (Some(plain), Some(flow)) = (
        row("rebind apply --no-commit --yes ("),
        row("rebind apply --yes, git flow"),
    ) {
        let per = |a: Duration, b: Duration| {
            (a.as_secs_f64() - b.as_secs_f64()) * 1e6 / commit_files as f64
        };
        println!(
            "git flow over --no-commit ({commit_files} files): {:.0} µs a file by wall time, {:.0} µs a file by CPU time",
            per(flow.median, plain.median),
            per(flow.cpu, plain.cpu)
        );
    }
    let _ = std::fs::remove_dir_all(&copy);
}

//! `rebind completions SHELL` and `rebind man [COMMAND]`: generated from the
//! clap definitions, so they never drift from the flags.

use super::args::{Cli, CompletionsArgs, ManArgs};
use anyhow::{bail, Context, Result};
use clap::CommandFactory;
use rebind::output::{Exit, Parts, Reported};

/// A generated script or page: written to stdout, kept with `-q`.
fn printed(text: String) -> Reported {
    Reported::new(
        Parts::new(move |sink| sink.out(&text), String::new()),
        Exit::Ok,
    )
}

pub fn completions(a: CompletionsArgs) -> Result<Reported> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "rebind", &mut buf);
    let script = String::from_utf8(buf).context("completions: the script is not UTF-8")?;
    Ok(printed(script))
}

pub fn man(a: ManArgs) -> Result<Reported> {
    let mut cmd = Cli::command();
    // Building sets each subcommand's display name (`rebind-diff`), which
    // is its page's title and what the SEE ALSO-style list refers to.
    cmd.build();
    let page = match &a.command {
        None => cmd,
        Some(name) => match cmd.find_subcommand(name) {
            Some(sub) if !sub.is_hide_set() => sub.clone(),
            _ => {
                let names: Vec<&str> = cmd
                    .get_subcommands()
                    .filter(|s| !s.is_hide_set() && s.get_name() != "help")
                    .map(|s| s.get_name())
                    .collect();
                bail!("man {name}: no such command (one of: {})", names.join(", "))
            }
        },
    };
    let mut buf = Vec::new();
    clap_mangen::Man::new(page)
        .source(format!("rebind {}", env!("CARGO_PKG_VERSION")))
        .render(&mut buf)
        .context("man: cannot render the page")?;
    let page = String::from_utf8(buf).context("man: the page is not UTF-8")?;
    Ok(printed(page))
}

//! `patchbench completions SHELL` and `patchbench man`: shell completion scripts
//! (clap_complete) and man pages (clap_mangen), both generated from the one clap definition
//! of the command line, which the binary's dispatch hands in (this library never sees the
//! CLI module). The man pages are made at run time rather than by the build script because
//! that definition is made of the commands' argument types in this library, which a build
//! script cannot use.

use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to write the completion script for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// Write one page per command (patchbench.1, patchbench-run.1, …) into DIR instead of
    /// printing patchbench.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Prints the completion script of `cmd` for the shell asked for.
pub fn completions(a: &CompletionsArgs, mut cmd: clap::Command) -> anyhow::Result<i32> {
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "patchbench", &mut script);
    crate::report::print(&String::from_utf8_lossy(&script))?;
    Ok(0)
}

fn page(cmd: &clap::Command) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut out)
        .context("cannot render the man page")?;
    Ok(out)
}

/// Prints the man page of `cmd`, or writes one page per (visible) command into `--dir`.
pub fn man(a: &ManArgs, mut cmd: clap::Command) -> anyhow::Result<i32> {
    cmd.build();
    let Some(dir) = &a.dir else {
        crate::report::print(&String::from_utf8_lossy(&page(&cmd)?))?;
        return Ok(0);
    };
    let dir = crate::args::check_dir(dir)?;
    let mut pages = vec![cmd.clone()];
    pages.extend(cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
    for p in &pages {
        let name = p
            .get_display_name()
            .unwrap_or_else(|| p.get_name())
            .to_string();
        let path = dir.join(format!("{name}.1"));
        crate::record::output_file::write("man --dir", &path, &page(p)?)?;
    }
    crate::safe_text::eprint_line(&format!(
        "patchbench: wrote {} man pages to {}",
        pages.len(),
        dir.display()
    ));
    Ok(0)
}

//! Running one tool: echo it under `-v`, capture its output, and turn a
//! failure into one line.

use crate::error::CompileError;
use std::path::PathBuf;
use std::process::{Command, Output};

pub struct Runner {
    pub verbose: bool,
}

impl Runner {
    /// Runs `command` to completion; only a failure to start it is an error
    /// here (the caller judges the exit status).
    pub fn output(&self, tool: &str, command: &mut Command) -> Result<Output, CompileError> {
        if self.verbose {
            eprintln!("{}", shell_line(command));
        }
        command.output().map_err(|cause| CompileError::Spawn {
            tool: tool.to_owned(),
            path: PathBuf::from(command.get_program()),
            cause,
        })
    }

    /// Runs `command` and fails unless it exits 0.
    pub fn run(&self, tool: &str, command: &mut Command) -> Result<(), CompileError> {
        let output = self.output(tool, command)?;
        if output.status.success() {
            if self.verbose {
                eprint!("{}", String::from_utf8_lossy(&output.stderr));
            }
            Ok(())
        } else {
            Err(describe_failure(tool, &output))
        }
    }
}

/// The line of a failed tool's output that says what went wrong: the first
/// one mentioning an error, else the last one printed.
pub fn describe_failure(tool: &str, output: &Output) -> CompileError {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let message = lines
        .iter()
        .find(|l| l.to_ascii_lowercase().contains("error"))
        .or(lines.last())
        .map_or_else(|| "(no output)".to_owned(), |l| (*l).to_owned());
    let status = output
        .status
        .code()
        .map_or_else(|| "by signal".to_owned(), |c| c.to_string());
    CompileError::ToolFailed {
        tool: tool.to_owned(),
        status,
        message,
    }
}

/// The command as a shell line, quoting what needs it.
pub fn shell_line(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|a| quote(&a.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=+,:@%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_names_the_error_line() {
        let output = Command::new("sh")
            .args(["-c", "echo 'k.cu:3:1: warning: w' >&2; echo 'k.cu:4:2: error: bad' >&2; echo '1 error generated.' >&2; exit 1"])
            .output()
            .unwrap();
        assert_eq!(
            describe_failure("clang-19", &output).to_string(),
            "clang-19 failed (exit 1): k.cu:4:2: error: bad"
        );
        let silent = Command::new("sh").args(["-c", "exit 4"]).output().unwrap();
        assert_eq!(
            describe_failure("llc-19", &silent).to_string(),
            "llc-19 failed (exit 4): (no output)"
        );
    }

    #[test]
    fn commands_print_as_shell_lines() {
        let mut command = Command::new("clang-19");
        command.args(["-O2", "my file.cu", "-DX='a'"]);
        assert_eq!(
            shell_line(&command),
            r"clang-19 -O2 'my file.cu' '-DX='\''a'\'''"
        );
    }

    #[test]
    fn a_program_that_cannot_start_is_named() {
        let runner = Runner { verbose: false };
        let err = runner
            .output("ptxas", &mut Command::new("/nonexistent/ptxas"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("cannot run ptxas (/nonexistent/ptxas): "),
            "{err}"
        );
    }
}

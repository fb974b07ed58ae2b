//! Package names that follow their directories.
//!
//! A workspace member in directory `x` is package `prlx-x`, so that a
//! crate's directory and its name in `Cargo.toml`, `cargo -p` and `use`
//! lines say the same thing. A member whose directory name itself starts
//! with `prlx` (`prlxd`, `prlxctl`) is named exactly as its directory.

use std::path::PathBuf;

use crate::workspace::Package;

/// A member whose package name does not follow its directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamingViolation {
    pub manifest: PathBuf,
    /// The name of the directory holding the manifest.
    pub dir: String,
    pub package: String,
    /// The name the rule asks for.
    pub expected: String,
}

/// The package name a member in directory `dir` must have.
pub fn expected_name(dir: &str) -> String {
    if dir.starts_with("prlx") {
        dir.to_string()
    } else {
        format!("prlx-{dir}")
    }
}

/// `package`'s violation of the rule, if it breaks it.
pub fn check(package: &Package) -> Option<NamingViolation> {
    let dir = package.dir.file_name()?.to_string_lossy().into_owned();
    let expected = expected_name(&dir);
    (package.name != expected).then(|| NamingViolation {
        manifest: package.manifest.clone(),
        dir,
        package: package.name.clone(),
        expected,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_starting_with_prlx_name_their_package_as_they_are() {
        assert_eq!(expected_name("trace"), "prlx-trace");
        assert_eq!(expected_name("ptx-instrument"), "prlx-ptx-instrument");
        assert_eq!(expected_name("prlxd"), "prlxd");
        assert_eq!(expected_name("prlxctl"), "prlxctl");
    }
}

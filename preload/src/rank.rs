//! One session per rank of a multi-process job (MPI, Slurm, torchrun).
//!
//! Each process of such a job loads the shim; the launcher tells it its
//! rank. The session of rank N is named `<job>.rank<N>`, where `<job>` is
//! `PRLX_SESSION` when set (every rank shares it) or else the program and
//! the launcher's job id — so the ranks' sessions are named alike, sort
//! together in `prlxctl session list` and a directory listing, and pair
//! rank by rank in `prlxctl diff --session`.

/// Where ranks come from, most specific first: Open MPI, MPICH/Intel MPI
/// (PMI), PMIx, Slurm, MVAPICH, then torchrun's global and local rank.
const RANK_VARIABLES: &[&str] = &[
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "SLURM_PROCID",
    "MV2_COMM_WORLD_RANK",
    "RANK",
    "LOCAL_RANK",
];

/// Job ids the ranks of one job share.
const JOB_VARIABLES: &[&str] = &[
    "SLURM_JOB_ID",
    "PMIX_NAMESPACE",
    "OMPI_MCA_ess_base_jobid",
    "TORCHELASTIC_RUN_ID",
];

/// This process's rank, and the variable it came from; a variable that is
/// set but not a number is reported in `warnings` and skipped.
pub fn rank(
    lookup: &impl Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> Option<(u32, &'static str)> {
    for &variable in RANK_VARIABLES {
        let Some(text) = lookup(variable) else {
            continue;
        };
        match text.trim().parse::<u32>() {
            Ok(rank) => return Some((rank, variable)),
            Err(_) if text.trim().is_empty() => {}
            Err(_) => warnings.push(format!("{variable}={text:?} is not a rank number; ignored")),
        }
    }
    None
}

/// The job part of the ranks' session names when `PRLX_SESSION` is unset:
/// `<program>-<job id>`, the job id from the launcher, else the parent
/// process (mpirun, torchrun and their node daemons start a node's ranks).
pub fn default_job_name(lookup: &impl Fn(&str) -> Option<String>, program: &str) -> String {
    let job = JOB_VARIABLES
        .iter()
        .find_map(|v| lookup(v).filter(|j| !j.trim().is_empty()))
        // SAFETY: getppid cannot fail.
        .unwrap_or_else(|| format!("p{}", unsafe { libc::getppid() }));
    format!("{program}-{job}")
}

/// The session name of rank `rank` of job `job`, within the name rule's
/// length (the job part is shortened, never the rank).
pub fn session_for(job: &str, rank: u32) -> String {
    let suffix = format!(".rank{rank}");
    let room = prlx_session::MAX_SESSION_NAME.saturating_sub(suffix.len());
    let job = prlx_session::session_name_from(job);
    let mut cut = job.len().min(room);
    while !job.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{suffix}", &job[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn ranks_come_from_the_launchers_variables_most_specific_first() {
        let mut w = Vec::new();
        assert_eq!(rank(&env(&[]), &mut w), None);
        assert_eq!(
            rank(&env(&[("RANK", "3"), ("LOCAL_RANK", "1")]), &mut w),
            Some((3, "RANK"))
        );
        assert_eq!(
            rank(
                &env(&[("SLURM_PROCID", "7"), ("OMPI_COMM_WORLD_RANK", "2")]),
                &mut w
            ),
            Some((2, "OMPI_COMM_WORLD_RANK"))
        );
        assert_eq!(
            rank(&env(&[("LOCAL_RANK", "1")]), &mut w),
            Some((1, "LOCAL_RANK"))
        );
        assert!(w.is_empty());
        assert_eq!(
            rank(&env(&[("PMI_RANK", "x"), ("RANK", "4")]), &mut w),
            Some((4, "RANK"))
        );
        assert!(w[0].contains("PMI_RANK"), "{w:?}");
    }

    #[test]
    fn rank_sessions_share_the_job_name() {
        assert_eq!(session_for("train", 12), "train.rank12");
        let long = "j".repeat(200);
        let name = session_for(&long, 3);
        assert!(name.ends_with(".rank3"));
        assert!(prlx_session::check_session_name(&name).is_ok(), "{name}");
        assert_eq!(
            default_job_name(&env(&[("SLURM_JOB_ID", "991")]), "app"),
            "app-991"
        );
        assert!(default_job_name(&env(&[]), "app").starts_with("app-p"));
    }
}

//! `validate` as a CI job runs it: in a folder with no catalog above it and no default catalog,
//! it checks nothing (an absent default catalog reads as empty, exit 0) and says so on stderr,
//! so a job run in the wrong folder is not a silent pass.

use crate::common::TestEnv;

const SAID: &str = "nothing was checked";

#[test]
fn validate_with_no_catalog_found_says_it_checked_nothing() {
    let env = TestEnv::uninit_default();
    let run = env.run(&["validate"]);
    run.success().stderr_has(SAID).stderr_has("no catalog here");
    assert!(run.stdout.contains("0 files"), "{run}");
    // Quiet mutes it; --json keeps stdout one document.
    let quiet = env.run(&["--quiet", "validate"]);
    quiet.success();
    assert!(!quiet.stderr.contains(SAID), "{quiet}");
    assert_eq!(env.json(&["validate"])["files"], 0);
    // With a catalog (here the default, once created), or with paths, no such warning.
    env.run(&["init"]).success();
    let run = env.run(&["validate"]);
    run.success();
    assert!(!run.stderr.contains(SAID), "{run}");
}

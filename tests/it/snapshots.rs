//! Snapshots of every shipped policy's report and join table, and of every observed table's
//! report: a change to a policy or to the checker shows up as a reviewed diff.

use typejoin::{
    CheckOptions, Checked,
    render::{self, ReportOptions},
};

use crate::{files, load};

fn snapshot_name(path: &str) -> String {
    path.trim_end_matches(".toml")
        .trim_end_matches(".json")
        .replace('/', "__")
}

#[test]
fn shipped_policies_reports_and_tables() {
    let paths = files("lattices", "toml");
    assert!(paths.len() >= 8, "{paths:?}");
    for path in paths {
        let input = load(&path);
        let report = Checked::from(input.check(CheckOptions::default()));
        assert!(
            report.ok(),
            "{}",
            render::human(&report, ReportOptions::default())
        );
        let verbose = ReportOptions {
            verbose: true,
            ..ReportOptions::default()
        };
        let body = format!(
            "{}\n{}",
            render::human(&report, verbose),
            typejoin::render::table::text(input.table())
        );
        insta::assert_snapshot!(snapshot_name(&path), body);
    }
}

#[test]
fn observed_tables_reports() {
    for path in files("observed", "json") {
        let report = Checked::from(load(&path).check(CheckOptions::default()));
        let verbose = ReportOptions {
            verbose: true,
            ..ReportOptions::default()
        };
        insta::assert_snapshot!(snapshot_name(&path), render::human(&report, verbose));
    }
}

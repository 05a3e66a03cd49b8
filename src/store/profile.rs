//! The noise profile's data: what the store's runs of one set of settings say about the
//! spread of each metric, pooled in the database (no record is read), for the noise profile
//! `patchbench compare` builds from them.

use super::db::Store;
use super::schema::config_key;
use super::sql::params;
use std::collections::BTreeMap;

/// The settings a noise profile pools runs of: a run's kind, host, kernel and settings.
#[derive(Debug, Clone)]
pub struct Settings<'a> {
    pub kind: &'a str,
    pub host: &'a str,
    pub kernel_release: &'a str,
    pub kernel_version: &'a str,
    pub config: &'a BTreeMap<String, serde_json::Value>,
}

/// The most runs a noise profile pools: the latest of their settings. Thousands of runs pin a
/// spread down as well as any more would, and the profile then costs the same whatever the
/// store holds.
pub const PROFILE_RUNS: usize = 5000;

/// What the store holds for a noise profile: the latest [`PROFILE_RUNS`] complete runs of one
/// set of [`Settings`] (leaving some out), their labels, and per (label, metric key) the number
/// of positive values and the sample variance of their logarithms.
#[derive(Debug, Clone, Default)]
pub struct ProfileData {
    /// Runs pooled ([`PROFILE_RUNS`] when there were as many or more: the latest).
    pub runs: usize,
    /// Every label with a matching run ("" for none), sorted.
    pub labels: Vec<String>,
    /// (label, key, values, variance of ln(value)); groups of one value are left out.
    pub groups: Vec<(String, String, usize, f64)>,
}

impl Store {
    /// What a noise profile needs from the complete runs of `settings`, leaving out the runs
    /// `excluded` (the other side's), computed in the database (no record is read).
    pub fn profile_data(
        &self,
        settings: &Settings,
        excluded: &[i64],
    ) -> anyhow::Result<ProfileData> {
        let key = config_key(settings.config);
        let excluded = serde_json::to_string(excluded)?;
        self.reading(|db| {
            let not_excluded = db.dialect().not_in_json_ids("r.id", "$6");
            let filter = format!(
                "r.kind=$1 AND r.host=$2 AND r.kernel=$3 AND r.kernel_version=$4 AND \
                 r.config_key=$5 AND r.incomplete=$7 AND {not_excluded}"
            );
            let args = params![
                settings.kind,
                settings.host,
                settings.kernel_release,
                settings.kernel_version,
                key.as_str(),
                excluded.as_str(),
                false,
                PROFILE_RUNS as i64
            ];
            // The latest runs of these settings (counting them all would cost a scan).
            let latest = format!(
                "WITH latest AS (SELECT r.id, coalesce(r.label, '') AS label FROM runs r
                                 WHERE {filter} ORDER BY r.id DESC LIMIT $8)"
            );
            let mut data = ProfileData::default();
            let label_rows = db.query(
                &format!(
                    "{latest} SELECT label, count(*) FROM latest GROUP BY label ORDER BY label"
                ),
                args,
            )?;
            for r in &label_rows {
                data.labels.push(r.text(0)?);
                data.runs += r.int(1)? as usize;
            }
            let groups = db.query(
                &format!(
                    "{latest}
                     SELECT l.label, m.key, count(*),
                            CASE WHEN min(m.value) = max(m.value) THEN CAST(0 AS DOUBLE PRECISION)
                                 ELSE var_samp(ln(m.value)) END
                     FROM latest l JOIN metrics m ON m.run_id = l.id
                     WHERE m.value > 0
                     GROUP BY l.label, m.key
                     HAVING count(*) >= 2"
                ),
                args,
            )?;
            for r in &groups {
                if let Some(var) = r.opt_real(3)? {
                    data.groups
                        .push((r.text(0)?, r.text(1)?, r.int(2)? as usize, var));
                }
            }
            Ok(data)
        })
    }
}

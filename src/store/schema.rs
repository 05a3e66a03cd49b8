//! The store's schema, for both databases, in one place. SQLite stores went through versions
//! 1-3 before PostgreSQL was supported; those steps are kept as released. Version 4 is the
//! first both share: on SQLite it is a step from 3 (with a backfill done in Rust), on
//! PostgreSQL the whole schema at once (a new database starts there). Each later version is
//! one step in [`SHARED_STEPS`], written once with the few dialect words filled in by
//! [`render`]. A test (tests/store_backends.rs) checks that both databases end with the same
//! tables and columns, and that their CHECK rules accept exactly what
//! `crate::record::domain` accepts.
//!
//! The version is SQLite's `PRAGMA user_version`, and on PostgreSQL the one row of table
//! `patchbench_schema`. Migrations run under the write lock (SQLite `BEGIN IMMEDIATE`,
//! PostgreSQL an advisory lock), so two processes never run one twice. On PostgreSQL they
//! need the owner's rights: a role with only an agent's grants (docs/lab.md) finds the schema
//! current or is told to ask an admin.

use super::sql::{params, Db, DbError, Dialect};
use crate::error::Usage;

/// The schema version this build reads and writes.
pub const CURRENT: i64 = 8;

/// `PRAGMA application_id` of a patchbench store ("PBch"), and the `application` of the
/// PostgreSQL version table.
pub const APPLICATION_ID: i64 = 0x5042_6368;

/// What an agent role needs on a PostgreSQL store, and no more (docs/lab.md shows it; an admin
/// role that owns the tables runs the migrations). `ROLE` stands for the agent's role. With
/// these an agent reads the schema version, registers its box, takes a place in a lab
/// campaign, claims, renews, finishes, fails and hands back steps (`FOR UPDATE` needs the
/// UPDATE right on some column), inserts runs with their metrics, reads runs (`compare`,
/// `campaign status`), and moves a campaign along its schedule (finished when its last step
/// is, stopped after `campaign stop`, the rounds `--until` decided after its pilot); it
/// cannot change the schema, create or delete campaigns, or delete or rewrite runs.
pub const AGENT_GRANTS: &str = "\
GRANT USAGE ON SCHEMA public TO ROLE;
GRANT SELECT ON patchbench_schema, campaigns, campaign_steps, runs, run_parts, metrics,
    metric_descs, boxes TO ROLE;
GRANT UPDATE (state, attempts, owner, lease_until, started_at, finished_at, run_uuid, error,
              console_tail, box) ON campaign_steps TO ROLE;
GRANT UPDATE (state, state_reason, planned_rounds, decision_json, updated_at) ON campaigns
    TO ROLE;
GRANT INSERT ON runs, run_parts, metrics, metric_descs, campaign_steps TO ROLE;
GRANT INSERT, UPDATE ON boxes TO ROLE;
GRANT SELECT, INSERT, UPDATE, DELETE ON holds TO ROLE;
GRANT USAGE ON SEQUENCE campaign_steps_id_seq TO ROLE;
GRANT USAGE ON SEQUENCE runs_id_seq TO ROLE;
GRANT USAGE ON SEQUENCE metric_descs_id_seq TO ROLE;
";

/// The key of the PostgreSQL advisory lock held while migrating.
const MIGRATION_LOCK: i64 = 0x5042_6368_0001;

/// SQLite's schema history; entry i moves `user_version` from i to i + 1. Entries are never
/// changed once released (stores in the field went through them).
const SQLITE_HISTORY: &[&str] = &[
    r#"
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    label       TEXT,
    kind        TEXT NOT NULL,
    source      TEXT,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    host        TEXT NOT NULL,
    kernel      TEXT NOT NULL,
    incomplete  INTEGER NOT NULL,
    record_json TEXT NOT NULL
);
CREATE INDEX runs_by_label ON runs(label);
CREATE TABLE metrics (
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    name         TEXT NOT NULL,
    params_json  TEXT NOT NULL,
    title        TEXT NOT NULL,
    unit         TEXT NOT NULL,
    direction    TEXT NOT NULL,
    value        REAL NOT NULL,
    samples_json TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
"#,
    // Version 2: the metric domains of crate::record::domain as CHECK constraints (a test
    // below keeps the two in step). Rows of an earlier build that break them move to
    // metrics_refused.
    r#"
CREATE TABLE metrics_checked (
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    name         TEXT NOT NULL,
    params_json  TEXT NOT NULL CHECK (json_valid(params_json)
                                      AND json_type(params_json) = 'object'),
    title        TEXT NOT NULL,
    unit         TEXT NOT NULL,
    direction    TEXT NOT NULL CHECK (direction IN ('higher-is-better', 'lower-is-better')),
    value        REAL NOT NULL CHECK (abs(value) <= 1.7976931348623157e308),
    samples_json TEXT NOT NULL CHECK (json_valid(samples_json)
                                      AND json_type(samples_json) = 'array'
                                      AND instr(samples_json, 'null') = 0),
    PRIMARY KEY (run_id, key),
    CHECK (value > 0 OR name NOT IN ('unixbench.score', 'unixbench.index',
        'aim7.jobs-per-min', 'aim7.jobs-per-min-per-task', 'aim7.real',
        'will-it-scale.per_process_ops', 'will-it-scale.per_thread_ops')),
    CHECK (CASE WHEN name = 'aim7.jti' THEN value BETWEEN -100 AND 100 ELSE value >= 0 END),
    CHECK (json_extract(params_json, '$.tasks') IS NULL
        OR (json_extract(params_json, '$.tasks') NOT GLOB '*[^0-9]*'
            AND CAST(json_extract(params_json, '$.tasks') AS INTEGER) BETWEEN 1 AND 4194304)),
    CHECK (json_extract(params_json, '$.copies') IS NULL
        OR (json_extract(params_json, '$.copies') NOT GLOB '*[^0-9]*'
            AND CAST(json_extract(params_json, '$.copies') AS INTEGER) BETWEEN 1 AND 4194304)),
    CHECK (json_extract(params_json, '$.load') IS NULL
        OR (json_extract(params_json, '$.load') NOT GLOB '*[^0-9]*'
            AND CAST(json_extract(params_json, '$.load') AS INTEGER) BETWEEN 1 AND 4194304))
);
INSERT OR IGNORE INTO metrics_checked SELECT * FROM metrics;
CREATE TABLE metrics_refused AS SELECT * FROM metrics m WHERE NOT EXISTS
    (SELECT 1 FROM metrics_checked c WHERE c.run_id = m.run_id AND c.key = m.key);
DROP TABLE metrics;
ALTER TABLE metrics_checked RENAME TO metrics;
"#,
    // Version 3: every run has a UUID (runs of earlier builds get a random one here), and
    // campaigns keep their plan and the state of every step (`crate::campaign`).
    r#"
ALTER TABLE runs ADD COLUMN uuid TEXT;
UPDATE runs SET uuid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' ||
    substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) ||
    substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)));
CREATE UNIQUE INDEX runs_by_uuid ON runs(uuid);
CREATE TABLE campaigns (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT NOT NULL UNIQUE,
    spec_json      TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('running', 'stopping', 'finished', 'stopped',
                                                  'failed')),
    state_reason   TEXT,
    planned_rounds INTEGER NOT NULL CHECK (planned_rounds >= 1),
    decision_json  TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE TABLE campaign_steps (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign_id  INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    round        INTEGER NOT NULL CHECK (round >= 1),
    slot         INTEGER NOT NULL CHECK (slot >= 0),
    side         TEXT NOT NULL,
    box          TEXT NOT NULL DEFAULT '',
    state        TEXT NOT NULL CHECK (state IN ('planned', 'running', 'done', 'failed')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    owner        TEXT,
    lease_until  REAL,
    started_at   TEXT,
    finished_at  TEXT,
    run_uuid     TEXT,
    error        TEXT,
    console_tail TEXT,
    UNIQUE (campaign_id, round, side, box)
);
CREATE INDEX campaign_steps_by_state ON campaign_steps(campaign_id, state, round, slot);
"#,
];

/// SQLite's step from 3 to 4: a run's record moves to its own table (`run_records`), so that
/// `runs` holds only short columns and listings and the noise profile read no record; the
/// columns the listing and the profile need are added (filled from the records, the settings'
/// key by [`backfill_v4`]).
const SQLITE_V4: &str = r#"
CREATE TABLE run_records (
    run_id      INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    record_json TEXT NOT NULL
);
INSERT INTO run_records (run_id, record_json) SELECT id, record_json FROM runs;
ALTER TABLE runs ADD COLUMN kernel_version TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN config_key TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN metric_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN test_count INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET
    kernel_version = coalesce(json_extract(record_json, '$.system.kernel_version'), ''),
    metric_count = (SELECT count(*) FROM metrics m WHERE m.run_id = runs.id),
    test_count = (SELECT count(DISTINCT json_extract(params_json, '$.test')) FROM metrics m
                  WHERE m.run_id = runs.id);
ALTER TABLE runs DROP COLUMN record_json;
CREATE INDEX runs_by_settings ON runs(kind, host, kernel, kernel_version, config_key, incomplete);
"#;

/// The whole schema at version 4 on PostgreSQL. Its meaning is SQLite's after
/// [`SQLITE_HISTORY`] and [`SQLITE_V4`]: the same tables, columns and rules; the metric
/// domains (`crate::record::domain`) in PostgreSQL's words. One type differs: a metric's
/// parameters are JSONB here (parsed once per row, not once per rule that reads them).
const POSTGRES_V4: &str = r#"
CREATE TABLE runs (
    id             BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    label          TEXT,
    kind           TEXT NOT NULL,
    source         TEXT,
    started_at     TEXT NOT NULL,
    finished_at    TEXT NOT NULL,
    host           TEXT NOT NULL,
    kernel         TEXT NOT NULL,
    incomplete     BOOLEAN NOT NULL,
    uuid           TEXT,
    kernel_version TEXT NOT NULL DEFAULT '',
    config_key     TEXT NOT NULL DEFAULT '',
    metric_count   BIGINT NOT NULL DEFAULT 0,
    test_count     BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_label ON runs(label);
CREATE UNIQUE INDEX runs_by_uuid ON runs(uuid);
CREATE INDEX runs_by_settings
    ON runs(kind, host, kernel, kernel_version, config_key, incomplete, id);
CREATE TABLE run_records (
    run_id      BIGINT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    record_json TEXT NOT NULL
);
CREATE TABLE metrics (
    run_id       BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    name         TEXT NOT NULL,
    params_json  JSONB NOT NULL CHECK (jsonb_typeof(params_json) = 'object'),
    title        TEXT NOT NULL,
    unit         TEXT NOT NULL,
    direction    TEXT NOT NULL CHECK (direction IN ('higher-is-better', 'lower-is-better')),
    value        DOUBLE PRECISION NOT NULL CHECK (abs(value) <= 1.7976931348623157e308),
    samples_json TEXT NOT NULL CHECK (jsonb_typeof(CAST(samples_json AS jsonb)) = 'array'
                                      AND strpos(samples_json, 'null') = 0),
    PRIMARY KEY (run_id, key),
    CHECK (value > 0 OR name NOT IN ('unixbench.score', 'unixbench.index',
        'aim7.jobs-per-min', 'aim7.jobs-per-min-per-task', 'aim7.real',
        'will-it-scale.per_process_ops', 'will-it-scale.per_thread_ops')),
    CHECK (CASE WHEN name = 'aim7.jti' THEN value BETWEEN -100 AND 100 ELSE value >= 0 END),
    CHECK (params_json->>'tasks' IS NULL
        OR (params_json->>'tasks' ~ '^[0-9]+$'
            AND CAST(params_json->>'tasks' AS NUMERIC) BETWEEN 1 AND 4194304)),
    CHECK (params_json->>'copies' IS NULL
        OR (params_json->>'copies' ~ '^[0-9]+$'
            AND CAST(params_json->>'copies' AS NUMERIC) BETWEEN 1 AND 4194304)),
    CHECK (params_json->>'load' IS NULL
        OR (params_json->>'load' ~ '^[0-9]+$'
            AND CAST(params_json->>'load' AS NUMERIC) BETWEEN 1 AND 4194304))
);
CREATE TABLE metrics_refused (
    run_id       BIGINT,
    key          TEXT,
    name         TEXT,
    params_json  TEXT,
    title        TEXT,
    unit         TEXT,
    direction    TEXT,
    value        DOUBLE PRECISION,
    samples_json TEXT
);
CREATE TABLE campaigns (
    id             BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    name           TEXT NOT NULL UNIQUE,
    spec_json      TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('running', 'stopping', 'finished', 'stopped',
                                                  'failed')),
    state_reason   TEXT,
    planned_rounds BIGINT NOT NULL CHECK (planned_rounds >= 1),
    decision_json  TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE TABLE campaign_steps (
    id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    campaign_id  BIGINT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    round        BIGINT NOT NULL CHECK (round >= 1),
    slot         BIGINT NOT NULL CHECK (slot >= 0),
    side         TEXT NOT NULL,
    box          TEXT NOT NULL DEFAULT '',
    state        TEXT NOT NULL CHECK (state IN ('planned', 'running', 'done', 'failed')),
    attempts     BIGINT NOT NULL DEFAULT 0,
    owner        TEXT,
    lease_until  DOUBLE PRECISION,
    started_at   TEXT,
    finished_at  TEXT,
    run_uuid     TEXT,
    error        TEXT,
    console_tail TEXT,
    UNIQUE (campaign_id, round, side, box)
);
CREATE INDEX campaign_steps_by_state ON campaign_steps(campaign_id, state, round, slot);
CREATE TABLE patchbench_schema (
    version     BIGINT NOT NULL,
    application BIGINT NOT NULL
);
"#;

/// Steps after version 4, each written once for both databases: entry i moves the schema
/// from 4 + i to 5 + i. Dialect words are written `{now}` (the database's epoch seconds),
/// `{real}` (a float column) and `{id}` (an identity primary key); see [`render`].
const SHARED_STEPS: &[&str] = &[
    // Version 5: the boxes of a lab (`patchbench agent` registers its box: fingerprint, tags,
    // the executors it offers; `last_seen` is the database's clock at its latest claim or
    // heartbeat).
    r#"
CREATE TABLE boxes (
    name             TEXT PRIMARY KEY,
    fingerprint_json TEXT NOT NULL,
    tags             TEXT NOT NULL DEFAULT '',
    executors        TEXT NOT NULL DEFAULT '',
    agent            TEXT,
    first_seen       {real} NOT NULL,
    last_seen        {real} NOT NULL
);
"#,
    // Version 6: who runs steps where (a campaign run by one process: `campaign:ID`; a lab
    // box, whatever its campaigns: `box:NAME`), for a lease its owner renews, so that one
    // owner at a time claims there (`crate::store::campaign`, `Store::claim_held`).
    r#"
CREATE TABLE holds (
    key         TEXT PRIMARY KEY,
    owner       TEXT NOT NULL,
    lease_until {real} NOT NULL,
    what        TEXT NOT NULL DEFAULT ''
);
"#,
    // Version 7: bisections (`patchbench bisect`): a bisection's spec and state, and its path,
    // one row per step (the endpoints, each candidate, the confirmations), each naming the
    // campaign that measured it (`crate::store::bisect`). Self-contained: one step, two new
    // tables, nothing else changed.
    r#"
CREATE TABLE bisects (
    id           {id},
    name         TEXT NOT NULL UNIQUE,
    spec_json    TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('running', 'stopping', 'finished', 'stopped',
                                                'failed')),
    state_reason TEXT,
    answer_json  TEXT,
    owner        TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
CREATE TABLE bisect_steps (
    bisect_id   BIGINT NOT NULL REFERENCES bisects(id) ON DELETE CASCADE,
    seq         BIGINT NOT NULL CHECK (seq >= 1),
    role        TEXT NOT NULL CHECK (role IN ('endpoints', 'step', 'parent', 'revert')),
    commit_id   TEXT NOT NULL,
    campaign    TEXT,
    state       TEXT NOT NULL CHECK (state IN ('building', 'running', 'done', 'skipped',
                                                'failed')),
    detail_json TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (bisect_id, seq)
);
"#,
];

/// Version 8 (issue 34, a run as wide as its monitors make it): a metric's descriptor is
/// stored once (`metric_descs`), a run's values and record as packed parts (`run_parts`,
/// `crate::store::packed`), one appended per write; `metrics` keeps typed rows for the
/// scores only (what the noise profile pools and the CHECK rules guard) and `run_records`
/// goes, its records moved into parts by [`backfill_v8`]. `{params_checks}` are the rules of
/// a metric's parameters, in each dialect's words as `metrics` has them.
const V8: &str = r#"
CREATE TABLE metric_descs (
    id          {id},
    key         TEXT NOT NULL,
    name        TEXT NOT NULL,
    params_json {params} NOT NULL,
    title       TEXT NOT NULL,
    unit        TEXT NOT NULL,
    direction   TEXT NOT NULL CHECK (direction IN ('higher-is-better', 'lower-is-better')),
    {params_checks},
    UNIQUE (key, title, unit, direction)
);
CREATE TABLE run_parts (
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq    BIGINT NOT NULL,
    body   {blob} NOT NULL,
    PRIMARY KEY (run_id, seq)
);
"#;

/// The rules of a metric's parameters (as the `metrics` table of each dialect has them).
fn params_checks(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Sqlite => {
            "CHECK (json_valid(params_json) AND json_type(params_json) = 'object'),
    CHECK (json_extract(params_json, '$.tasks') IS NULL
        OR (json_extract(params_json, '$.tasks') NOT GLOB '*[^0-9]*'
            AND CAST(json_extract(params_json, '$.tasks') AS INTEGER) BETWEEN 1 AND 4194304)),
    CHECK (json_extract(params_json, '$.copies') IS NULL
        OR (json_extract(params_json, '$.copies') NOT GLOB '*[^0-9]*'
            AND CAST(json_extract(params_json, '$.copies') AS INTEGER) BETWEEN 1 AND 4194304)),
    CHECK (json_extract(params_json, '$.load') IS NULL
        OR (json_extract(params_json, '$.load') NOT GLOB '*[^0-9]*'
            AND CAST(json_extract(params_json, '$.load') AS INTEGER) BETWEEN 1 AND 4194304))"
        }
        Dialect::Postgres => {
            "CHECK (jsonb_typeof(params_json) = 'object'),
    CHECK (params_json->>'tasks' IS NULL
        OR (params_json->>'tasks' ~ '^[0-9]+$'
            AND CAST(params_json->>'tasks' AS NUMERIC) BETWEEN 1 AND 4194304)),
    CHECK (params_json->>'copies' IS NULL
        OR (params_json->>'copies' ~ '^[0-9]+$'
            AND CAST(params_json->>'copies' AS NUMERIC) BETWEEN 1 AND 4194304)),
    CHECK (params_json->>'load' IS NULL
        OR (params_json->>'load' ~ '^[0-9]+$'
            AND CAST(params_json->>'load' AS NUMERIC) BETWEEN 1 AND 4194304))"
        }
    }
}

/// Moves every run's record from `run_records` into its first part (values apart, each
/// descriptor once), then drops the monitor rows of `metrics` and `run_records` itself. A
/// record this build cannot read as one is kept whole, as its document's lines, and read as
/// before. Runs go in batches of 200, so memory stays bounded on a large store.
fn backfill_v8(db: &mut dyn Db) -> Result<(), DbError> {
    let mut cache = super::descs::DescCache::default();
    let mut after = 0_i64;
    loop {
        let rows = db.query(
            "SELECT run_id, record_json FROM run_records WHERE run_id > $1 ORDER BY run_id LIMIT 200",
            params![after],
        )?;
        let Some(last) = rows.last() else { break };
        after = last.int(0)?;
        for r in &rows {
            let (id, json) = (r.int(0)?, r.text(1)?);
            let contents = match crate::record::RunRecord::from_json(&json) {
                Ok(mut record) if record.validate().is_ok() => {
                    super::stored_form::contents_of(db, &mut cache, &mut record)?
                }
                _ => match serde_json::from_str::<serde_json::Value>(&json) {
                    Ok(doc) => super::stored_form::whole_document(&doc),
                    Err(_) => super::packed::Contents {
                        metrics: Vec::new(),
                        lines: vec![json],
                    },
                },
            };
            super::stored_form::add_whole(db, id, &contents)?;
        }
    }
    let monitors = crate::record::monitors::MONITOR_PREFIXES
        .iter()
        .map(|p| format!("substr(name, 1, {}) = '{p}'", p.len()))
        .collect::<Vec<_>>()
        .join(" OR ");
    db.execute(&format!("DELETE FROM metrics WHERE {monitors}"), &[])?;
    db.batch("DROP TABLE run_records;")
}

/// A shared step in one dialect's words.
pub fn render(step: &str, dialect: Dialect) -> String {
    let (id, real) = match dialect {
        Dialect::Sqlite => ("INTEGER PRIMARY KEY AUTOINCREMENT", "REAL"),
        Dialect::Postgres => (
            "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
            "DOUBLE PRECISION",
        ),
    };
    step.replace("{id}", id)
        .replace("{real}", real)
        .replace("{now}", dialect.now_epoch())
}

/// What a store's schema is at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// No tables at all: a new store.
    Empty,
    /// A patchbench store at this version.
    Version(i64),
    /// Some other program's database.
    Foreign,
}

/// Reads the schema version of the database behind `db`.
pub fn found(db: &mut dyn Db) -> Result<Found, DbError> {
    match db.dialect() {
        Dialect::Sqlite => {
            let app = db.query_one("PRAGMA application_id", &[])?.int(0)?;
            let tables = db
                .query_one("SELECT count(*) FROM sqlite_master", &[])?
                .int(0)?;
            let version = db.query_one("PRAGMA user_version", &[])?.int(0)?;
            Ok(if app == APPLICATION_ID {
                Found::Version(version)
            } else if app == 0 && tables == 0 {
                Found::Empty
            } else {
                Found::Foreign
            })
        }
        Dialect::Postgres => {
            let tables = db.query_one(
                "SELECT CAST(count(*) AS BIGINT),
                            CAST(count(*) FILTER (WHERE table_name = 'patchbench_schema') AS BIGINT)
                     FROM information_schema.tables WHERE table_schema = current_schema()",
                &[],
            )?;
            let (all, ours) = (tables.int(0)?, tables.int(1)?);
            if ours == 0 {
                return Ok(if all == 0 {
                    Found::Empty
                } else {
                    Found::Foreign
                });
            }
            let row = db.query_opt("SELECT version, application FROM patchbench_schema", &[])?;
            Ok(match row {
                Some(r) if r.int(1)? == APPLICATION_ID => Found::Version(r.int(0)?),
                _ => Found::Foreign,
            })
        }
    }
}

/// Brings the schema to `target` ([`CURRENT`]; an earlier version only to make a store as an
/// earlier build did, in tests), in one transaction under the write lock. Returns the number
/// of metric rows an earlier build stored outside their domain (kept aside).
pub fn migrate_to(db: &mut dyn Db, shown: &str, target: i64) -> anyhow::Result<i64> {
    let target = target.min(CURRENT);
    let dialect = db.dialect();
    let run = |db: &mut dyn Db| -> Result<Result<i64, String>, DbError> {
        if dialect == Dialect::Postgres {
            db.execute("SELECT pg_advisory_xact_lock($1)", params![MIGRATION_LOCK])?;
        }
        // Re-read under the lock: another process may have migrated meanwhile.
        let mut version = match found(db)? {
            Found::Empty => 0,
            Found::Version(v) => v,
            Found::Foreign => return Ok(Err("foreign".into())),
        };
        if version > CURRENT {
            return Ok(Err(format!("newer:{version}")));
        }
        while version < target {
            step(db, version)?;
            version += 1;
            set_version(db, version)?;
        }
        let refused = db
            .query_one("SELECT count(*) FROM metrics_refused", &[])?
            .int(0)?;
        Ok(Ok(refused))
    };
    let outcome = super::sql::in_transaction(db, run).map_err(|e| {
        if e.failure == super::sql::Failure::Permission {
            anyhow::Error::from(Usage(format!(
                "store {shown} needs its schema brought to version {CURRENT}, and this role may not change the schema ({e}); run any patchbench command on it once as the store's owner (docs/lab.md)"
            )))
        } else {
            anyhow::anyhow!("store {shown}: cannot update its schema: {e}")
        }
    })?;
    match outcome {
        Ok(refused) => Ok(refused),
        Err(why) if why == "foreign" => Err(Usage(format!(
            "{shown} is a database but not a patchbench store; give another --store"
        ))
        .into()),
        Err(why) => Err(Usage(format!(
            "store {shown} has schema version {}, newer than this patchbench reads ({CURRENT}); use a newer patchbench",
            why.trim_start_matches("newer:")
        ))
        .into()),
    }
}

/// Moves the schema from `version` to `version + 1`.
fn step(db: &mut dyn Db, version: i64) -> Result<(), DbError> {
    match (db.dialect(), version) {
        (Dialect::Sqlite, v) if v < 3 => db.batch(SQLITE_HISTORY[v as usize]),
        (Dialect::Sqlite, 3) => {
            db.batch(SQLITE_V4)?;
            backfill_v4(db)
        }
        (Dialect::Postgres, 0) => db.batch(&format!(
            "{POSTGRES_V4}
INSERT INTO patchbench_schema (version, application) VALUES (0,              {APPLICATION_ID});"
        )),
        (Dialect::Postgres, v) if v < 4 => Ok(()),
        (dialect, 7) => {
            let (params, blob) = match dialect {
                Dialect::Sqlite => ("TEXT", "BLOB"),
                Dialect::Postgres => ("JSONB", "BYTEA"),
            };
            db.batch(
                &render(V8, dialect)
                    .replace("{params_checks}", params_checks(dialect))
                    .replace("{params}", params)
                    .replace("{blob}", blob),
            )?;
            backfill_v8(db)
        }
        (dialect, v) => db.batch(&render(SHARED_STEPS[(v - 4) as usize], dialect)),
    }
}

fn set_version(db: &mut dyn Db, version: i64) -> Result<(), DbError> {
    match db.dialect() {
        Dialect::Sqlite => db.batch(&format!(
            "PRAGMA user_version={version}; PRAGMA application_id={APPLICATION_ID};"
        )),
        Dialect::Postgres => db
            .execute(
                "UPDATE patchbench_schema SET version = $1",
                params![version],
            )
            .map(|_| ()),
    }
}

/// What column `runs.config_key` holds: a short fingerprint of a run's settings (`config`);
/// runs with equal settings have equal keys (the noise profile pools only those).
pub fn config_key(config: &std::collections::BTreeMap<String, serde_json::Value>) -> String {
    use sha2::Digest;
    let text = serde_json::to_string(config).unwrap_or_default();
    let digest = sha2::Sha256::digest(text.as_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// Fills `config_key` of every run from its stored record (the other new columns are filled
/// in SQL).
fn backfill_v4(db: &mut dyn Db) -> Result<(), DbError> {
    let rows = db.query(
        "SELECT run_id, json_extract(record_json, '$.config') FROM run_records",
        &[],
    )?;
    for row in rows {
        let config: std::collections::BTreeMap<String, serde_json::Value> = row
            .opt_text(1)?
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        db.execute(
            "UPDATE runs SET config_key = $2 WHERE id = $1",
            params![row.int(0)?, config_key(&config)],
        )?;
    }
    Ok(())
}

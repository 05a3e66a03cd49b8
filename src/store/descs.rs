//! Metric descriptors (schema version 8): what a metric is (its name, parameters, title, unit
//! and direction) stored once in `metric_descs`, so a run's thousands of values carry only a
//! descriptor's id ([`super::packed::Entry`]). The store keeps the descriptors it has seen in
//! memory ([`DescCache`]); a write that fails forgets them all, so an id from a rolled-back
//! transaction is never used.

use super::sql::{self, Db, DbError, Value};
use crate::record::{Direction, Metric, SharedParams, SharedStr};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// What a metric is, apart from its value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Desc {
    pub name: SharedStr,
    pub params: SharedParams,
    pub title: SharedStr,
    pub unit: SharedStr,
    pub direction: Direction,
}

impl Desc {
    /// A metric's descriptor.
    pub fn of(m: &Metric) -> Desc {
        Desc {
            name: m.name.clone(),
            params: m.params.clone(),
            title: m.title.clone(),
            unit: m.unit.clone(),
            direction: m.direction,
        }
    }

    /// The metric it describes, with this value and these samples (its text shared, not
    /// copied).
    pub fn metric(&self, value: f64, samples: Vec<f64>) -> Metric {
        Metric {
            name: self.name.clone(),
            params: self.params.clone(),
            title: self.title.clone(),
            unit: self.unit.clone(),
            direction: self.direction,
            value,
            samples,
        }
    }
}

/// The word stored for a direction.
pub fn direction_word(d: Direction) -> &'static str {
    match d {
        Direction::HigherIsBetter => "higher-is-better",
        Direction::LowerIsBetter => "lower-is-better",
    }
}

fn direction_of(word: &str) -> Result<Direction, DbError> {
    match word {
        "higher-is-better" => Ok(Direction::HigherIsBetter),
        "lower-is-better" => Ok(Direction::LowerIsBetter),
        other => Err(DbError::other(format!(
            "a metric descriptor has direction {other:?}"
        ))),
    }
}

/// The descriptors a store has seen, both ways. Looked up by a hash of the metric's fields,
/// so that finding the id of each of a run's thousands of metrics allocates nothing.
#[derive(Debug, Default)]
pub struct DescCache {
    ids: HashMap<u64, Vec<(Arc<Desc>, i64)>>,
    descs: HashMap<i64, Arc<Desc>>,
}

/// The fields of a descriptor, borrowed (from a [`Metric`] or a [`Desc`]).
#[derive(Clone, Copy)]
struct Fields<'a> {
    name: &'a str,
    params: &'a BTreeMap<String, String>,
    title: &'a str,
    unit: &'a str,
    direction: Direction,
}

impl<'a> Fields<'a> {
    fn of_metric(m: &'a Metric) -> Fields<'a> {
        Fields {
            name: &m.name,
            params: &m.params,
            title: &m.title,
            unit: &m.unit,
            direction: m.direction,
        }
    }

    fn of_desc(d: &'a Desc) -> Fields<'a> {
        Fields {
            name: &d.name,
            params: &d.params,
            title: &d.title,
            unit: &d.unit,
            direction: d.direction,
        }
    }

    fn hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        (
            self.name,
            self.params,
            self.title,
            self.unit,
            self.direction,
        )
            .hash(&mut h);
        h.finish()
    }

    fn is(&self, d: &Desc) -> bool {
        self.name == d.name
            && self.title == d.title
            && self.unit == d.unit
            && self.direction == d.direction
            && *self.params == *d.params
    }

    fn to_desc(self) -> Desc {
        Desc {
            name: self.name.into(),
            params: self.params.clone().into(),
            title: self.title.into(),
            unit: self.unit.into(),
            direction: self.direction,
        }
    }
}

impl DescCache {
    /// Forgets everything (after a failed write).
    pub fn clear(&mut self) {
        self.ids.clear();
        self.descs.clear();
    }

    fn keep(&mut self, id: i64, desc: Desc) {
        let hash = Fields::of_desc(&desc).hash();
        let desc = Arc::new(desc);
        let same = self.ids.entry(hash).or_default();
        if !same.iter().any(|(d, _)| **d == *desc) {
            same.push((desc.clone(), id));
        }
        self.descs.insert(id, desc);
    }

    fn find(&self, f: &Fields, hash: u64) -> Option<i64> {
        self.ids
            .get(&hash)?
            .iter()
            .find(|(d, _)| f.is(d))
            .map(|(_, id)| *id)
    }

    /// The descriptor of a stored id, once [`DescCache::load`] read it.
    pub fn get(&self, id: i64) -> Option<&Arc<Desc>> {
        self.descs.get(&id)
    }

    /// The ids of these metrics' descriptors, storing the ones the store lacks.
    pub fn ids_of(&mut self, db: &mut dyn Db, metrics: &[Metric]) -> Result<Vec<i64>, DbError> {
        let fields: Vec<Fields> = metrics.iter().map(Fields::of_metric).collect();
        self.ids_of_fields(db, &fields)
    }

    /// The ids of these descriptors, storing the ones the store lacks.
    pub fn ids_for(&mut self, db: &mut dyn Db, descs: &[&Desc]) -> Result<Vec<i64>, DbError> {
        let fields: Vec<Fields> = descs.iter().map(|d| Fields::of_desc(d)).collect();
        self.ids_of_fields(db, &fields)
    }

    fn ids_of_fields(&mut self, db: &mut dyn Db, fields: &[Fields]) -> Result<Vec<i64>, DbError> {
        let hashes: Vec<u64> = fields.iter().map(Fields::hash).collect();
        let mut missing: Vec<Desc> = Vec::new();
        let mut listed: HashMap<u64, Vec<usize>> = HashMap::new();
        for (f, hash) in fields.iter().zip(&hashes) {
            if self.find(f, *hash).is_some() {
                continue;
            }
            let same = listed.entry(*hash).or_default();
            if !same.iter().any(|i| f.is(&missing[*i])) {
                same.push(missing.len());
                missing.push(f.to_desc());
            }
        }
        if !missing.is_empty() {
            self.find_or_add(db, missing)?;
        }
        fields
            .iter()
            .zip(&hashes)
            .map(|(f, hash)| {
                self.find(f, *hash)
                    .ok_or_else(|| DbError::other("a metric descriptor was not stored"))
            })
            .collect()
    }

    /// Reads the descriptors of these ids that it does not hold yet.
    pub fn load(
        &mut self,
        db: &mut dyn Db,
        ids: impl IntoIterator<Item = i64>,
    ) -> Result<(), DbError> {
        let mut want: Vec<i64> = ids
            .into_iter()
            .filter(|i| !self.descs.contains_key(i))
            .collect();
        want.sort_unstable();
        want.dedup();
        for chunk in want.chunks(500) {
            let list = chunk
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(",");
            let rows = db.query(
                &format!(
                    "SELECT id, name, CAST(params_json AS TEXT), title, unit, direction \
                     FROM metric_descs WHERE id IN ({list})"
                ),
                &[],
            )?;
            for r in &rows {
                self.keep(r.int(0)?, read_desc(r)?);
            }
            if let Some(id) = chunk.iter().find(|i| !self.descs.contains_key(i)) {
                return Err(DbError::other(format!(
                    "a run names metric descriptor {id}, which the store does not have"
                )));
            }
        }
        Ok(())
    }

    /// Finds the stored ids of `missing`, inserting those not stored (another writer may
    /// insert the same descriptor at the same time: its row is then found).
    fn find_or_add(&mut self, db: &mut dyn Db, missing: Vec<Desc>) -> Result<(), DbError> {
        for chunk in missing.chunks(200) {
            let mut values: Vec<Value> = Vec::with_capacity(chunk.len() * 6);
            for d in chunk {
                values.extend([
                    crate::record::metric_key(&d.name, &d.params).into(),
                    d.name.as_str().into(),
                    serde_json::to_string(&d.params).unwrap_or_default().into(),
                    d.title.as_str().into(),
                    d.unit.as_str().into(),
                    direction_word(d.direction).into(),
                ]);
            }
            db.execute(
                &format!(
                    "INSERT INTO metric_descs (key, name, params_json, title, unit, direction) \
                     VALUES {} ON CONFLICT (key, title, unit, direction) DO NOTHING",
                    sql::values_list(chunk.len(), 6)
                ),
                &values,
            )?;
            let keys: Vec<Value> = chunk
                .iter()
                .map(|d| crate::record::metric_key(&d.name, &d.params).into())
                .collect();
            let rows = db.query(
                &format!(
                    "SELECT id, name, CAST(params_json AS TEXT), title, unit, direction \
                     FROM metric_descs WHERE key IN ({})",
                    (1..=keys.len())
                        .map(|i| format!("${i}"))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                &keys,
            )?;
            for r in &rows {
                self.keep(r.int(0)?, read_desc(r)?);
            }
        }
        Ok(())
    }
}

fn read_desc(r: &sql::Row) -> Result<Desc, DbError> {
    let params: BTreeMap<String, String> = serde_json::from_str(&r.text(2)?)
        .map_err(|e| DbError::other(format!("a metric descriptor's parameters: {e}")))?;
    Ok(Desc {
        name: r.text(1)?.into(),
        params: params.into(),
        title: r.text(3)?.into(),
        unit: r.text(4)?.into(),
        direction: direction_of(&r.text(5)?)?,
    })
}

//! The packed form of a run's parts (schema version 8): each write of a run appends one
//! part, a compressed list of splices on two sequences, the run's metric values
//! ([`Entry`]: a descriptor id, the value and its samples) and the lines of its record
//! document without its metrics. A run's first part inserts everything; each finished unit
//! after it appends only what changed since the last write (the splices `similar`'s diff
//! finds), so nothing stored is deleted or rewritten and a write costs what it changed.
//! Reading applies the parts in order.
//!
//! Bytes of a part: the length of its header, the header, the body. The header (zlib) is the
//! list of descriptor ids the part's entries name (a count, then each id as a zigzag
//! difference from the one before), so copying a part into another store (`push`) rewrites
//! only the header ([`remap`]), never the body. The body (zlib) is `b"PBP1"`, then the
//! metric splices and the line splices, each as a count and per splice its position, the
//! number of items it removes and the items it puts there; an entry names its descriptor by
//! its place in the header. Numbers are LEB128 varints; a value is one tag byte (0: +0.0;
//! 1: an integer, zigzag varint; 2: the f64's 8 bytes), so the many zero counters of a
//! monitored run take one byte each before compression.

use similar::{capture_diff_slices_deadline, Algorithm, DiffTag};
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// The first bytes of a part (after decompression).
const MAGIC: &[u8; 4] = b"PBP1";

/// The most bytes a part may decompress to (a damaged or hostile part is refused, not read
/// into memory without limit).
const MAX_PART_BYTES: u64 = 1 << 30;

/// How long a diff may search for the smallest set of splices before it settles for a
/// larger one (still exact).
const DIFF_DEADLINE: Duration = Duration::from_millis(200);

/// One metric value of a run as stored: which metric ([`super::descs`]), its value and its
/// samples. Equal when every number has the same bits.
#[derive(Debug, Clone)]
pub struct Entry {
    pub desc: i64,
    pub value: f64,
    pub samples: Vec<f64>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.desc == other.desc
            && self.value.to_bits() == other.value.to_bits()
            && self.samples.len() == other.samples.len()
            && self
                .samples
                .iter()
                .zip(&other.samples)
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }
}

impl Eq for Entry {}

impl Hash for Entry {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.desc.hash(state);
        self.value.to_bits().hash(state);
        for s in &self.samples {
            s.to_bits().hash(state);
        }
    }
}

/// Replace `delete` items at `at` (a position in the sequence as the splices before this one
/// left it) with `insert`.
#[derive(Debug, Clone, PartialEq)]
pub struct Splice<T> {
    pub at: usize,
    pub delete: usize,
    pub insert: Vec<T>,
}

/// One write of a run: what changed in its metrics and in its record's lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Part {
    pub metrics: Vec<Splice<Entry>>,
    pub lines: Vec<Splice<String>>,
}

impl Part {
    /// The part that makes a run from nothing.
    pub fn whole(metrics: &[Entry], lines: &[String]) -> Part {
        Part {
            metrics: splices(&[], metrics),
            lines: splices(&[], lines),
        }
    }

    /// The part that turns `old` into `new`.
    pub fn between(old: &Contents, new: &Contents) -> Part {
        Part {
            metrics: splices(&old.metrics, &new.metrics),
            lines: splices(&old.lines, &new.lines),
        }
    }

    /// True when it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.metrics.is_empty() && self.lines.is_empty()
    }
}

/// What a run's parts add up to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Contents {
    pub metrics: Vec<Entry>,
    pub lines: Vec<String>,
}

impl Contents {
    /// Applies a part.
    pub fn apply(&mut self, part: Part) -> Result<(), String> {
        apply(&mut self.metrics, part.metrics)?;
        apply(&mut self.lines, part.lines)
    }
}

/// The splices that turn `old` into `new`, in order.
pub fn splices<T: Eq + Hash + Clone>(old: &[T], new: &[T]) -> Vec<Splice<T>> {
    if old.is_empty() {
        return if new.is_empty() {
            Vec::new()
        } else {
            vec![Splice {
                at: 0,
                delete: 0,
                insert: new.to_vec(),
            }]
        };
    }
    let deadline = Instant::now() + DIFF_DEADLINE;
    let ops = capture_diff_slices_deadline(Algorithm::Myers, old, new, Some(deadline));
    let mut out: Vec<Splice<T>> = Vec::new();
    let mut shift: isize = 0;
    for op in ops {
        let (tag, o, n) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            continue;
        }
        let at = (o.start as isize + shift) as usize;
        shift += n.len() as isize - o.len() as isize;
        // Adjacent changes (a delete then an insert at its end) become one splice.
        if let Some(last) = out.last_mut() {
            if last.at + last.insert.len() == at {
                last.delete += o.len();
                last.insert.extend_from_slice(&new[n]);
                continue;
            }
        }
        out.push(Splice {
            at,
            delete: o.len(),
            insert: new[n].to_vec(),
        });
    }
    out
}

/// Applies splices in order.
pub fn apply<T>(list: &mut Vec<T>, splices: Vec<Splice<T>>) -> Result<(), String> {
    for s in splices {
        let end = s.at.checked_add(s.delete).filter(|e| *e <= list.len());
        let Some(end) = end else {
            return Err(format!(
                "a part replaces items {}..{} of {}",
                s.at,
                s.at.saturating_add(s.delete),
                list.len()
            ));
        };
        list.splice(s.at..end, s.insert);
    }
    Ok(())
}

/// A part's bytes, compressed.
pub fn encode(part: &Part) -> Vec<u8> {
    let metrics: Vec<SpliceView<Entry>> = part
        .metrics
        .iter()
        .map(|s| (s.at, s.delete, s.insert.as_slice()))
        .collect();
    let lines: Vec<SpliceView<String>> = part
        .lines
        .iter()
        .map(|s| (s.at, s.delete, s.insert.as_slice()))
        .collect();
    encode_splices(&metrics, &lines)
}

/// The bytes of the part that makes `contents` from nothing (`encode(&Part::whole(..))`
/// without copying them).
pub fn encode_whole(contents: &Contents) -> Vec<u8> {
    let one = |n: usize| if n == 0 { 0 } else { 1 };
    let metrics = [(0, 0, contents.metrics.as_slice())];
    let lines = [(0, 0, contents.lines.as_slice())];
    encode_splices(
        &metrics[..one(contents.metrics.len())],
        &lines[..one(contents.lines.len())],
    )
}

/// Splices as (at, delete, insert).
type SpliceView<'a, T> = (usize, usize, &'a [T]);

fn encode_splices(metrics: &[SpliceView<Entry>], lines: &[SpliceView<String>]) -> Vec<u8> {
    let mut ids: Vec<i64> = metrics
        .iter()
        .flat_map(|s| s.2.iter().map(|e| e.desc))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let place: std::collections::HashMap<i64, u64> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (*id, i as u64))
        .collect();
    let mut raw = Vec::with_capacity(1024);
    raw.extend_from_slice(MAGIC);
    put_splices(&mut raw, metrics, |out, e: &Entry| {
        put_varint(out, place.get(&e.desc).copied().unwrap_or(0));
        put_entry_numbers(out, e);
    });
    put_splices(&mut raw, lines, |out, line: &String| {
        put_varint(out, line.len() as u64);
        out.extend_from_slice(line.as_bytes());
    });
    with_header(&header_of(&ids), &zlib(&raw))
}

/// The descriptor ids a part's entries name.
pub fn desc_ids(bytes: &[u8]) -> Result<Vec<i64>, String> {
    let (header, _) = split(bytes)?;
    read_header(header)
}

/// The part with each descriptor id `id` named as `to(id)` (its body untouched).
pub fn remap(bytes: &[u8], to: impl Fn(i64) -> Result<i64, String>) -> Result<Vec<u8>, String> {
    let (header, body) = split(bytes)?;
    let ids = read_header(header)?
        .into_iter()
        .map(to)
        .collect::<Result<Vec<i64>, String>>()?;
    Ok(with_header(&header_of(&ids), body))
}

/// A part from its bytes.
pub fn decode(bytes: &[u8]) -> Result<Part, String> {
    let (header, body) = split(bytes)?;
    let ids = read_header(header)?;
    let raw = unzlib(body)?;
    let mut r = Reader { bytes: &raw, at: 0 };
    if r.take(4)? != MAGIC {
        return Err("a part does not start with its mark".into());
    }
    let metrics = r.splices(|r| {
        let place = r.varint()?;
        let desc = usize::try_from(place)
            .ok()
            .and_then(|p| ids.get(p).copied())
            .ok_or("an entry names a descriptor its part does not list")?;
        r.entry_numbers(desc)
    })?;
    let lines = r.splices(|r| {
        let n = r.len()?;
        String::from_utf8(r.take(n)?.to_vec()).map_err(|_| "a line is not UTF-8".to_string())
    })?;
    if r.at != raw.len() {
        return Err("a part has bytes after its end".into());
    }
    Ok(Part { metrics, lines })
}

fn zlib(raw: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing into a Vec cannot fail.
    let _ = z.write_all(raw);
    z.finish().unwrap_or_default()
}

fn unzlib(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(bytes)
        .take(MAX_PART_BYTES + 1)
        .read_to_end(&mut raw)
        .map_err(|e| format!("a part does not decompress ({e})"))?;
    if raw.len() as u64 > MAX_PART_BYTES {
        return Err("a part is larger than 1 GiB".into());
    }
    Ok(raw)
}

/// The header of these ids, compressed.
fn header_of(ids: &[i64]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(ids.len() + 4);
    put_varint(&mut raw, ids.len() as u64);
    let mut before = 0_i64;
    for id in ids {
        let d = id.wrapping_sub(before);
        put_varint(&mut raw, ((d << 1) ^ (d >> 63)) as u64);
        before = *id;
    }
    zlib(&raw)
}

fn read_header(header: &[u8]) -> Result<Vec<i64>, String> {
    let raw = unzlib(header)?;
    let mut r = Reader { bytes: &raw, at: 0 };
    let n = r.len()?;
    let mut ids = Vec::with_capacity(n);
    let mut before = 0_i64;
    for _ in 0..n {
        let z = r.varint()?;
        let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
        before = before.wrapping_add(d);
        ids.push(before);
    }
    if r.at != raw.len() {
        return Err("a part's header has bytes after its end".into());
    }
    Ok(ids)
}

fn with_header(header: &[u8], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(header.len() + body.len() + 4);
    put_varint(&mut out, header.len() as u64);
    out.extend_from_slice(header);
    out.extend_from_slice(body);
    out
}

/// A part's header and body.
fn split(bytes: &[u8]) -> Result<(&[u8], &[u8]), String> {
    let mut r = Reader { bytes, at: 0 };
    let n = r.len()?;
    let header = r.take(n)?;
    Ok((header, &bytes[r.at..]))
}

fn put_splices<T>(out: &mut Vec<u8>, splices: &[SpliceView<T>], put: impl Fn(&mut Vec<u8>, &T)) {
    put_varint(out, splices.len() as u64);
    for (at, delete, insert) in splices {
        put_varint(out, *at as u64);
        put_varint(out, *delete as u64);
        put_varint(out, insert.len() as u64);
        for item in *insert {
            put(out, item);
        }
    }
}

fn put_entry_numbers(out: &mut Vec<u8>, e: &Entry) {
    put_number(out, e.value);
    put_varint(out, e.samples.len() as u64);
    for s in &e.samples {
        put_number(out, *s);
    }
}

/// Integers that an f64 holds exactly (below 2^53 in size).
const EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

fn put_number(out: &mut Vec<u8>, v: f64) {
    if v.to_bits() == 0 {
        out.push(0);
    } else if v.fract() == 0.0 && v.abs() < EXACT_INTEGER && v.to_bits() != (-0.0f64).to_bits() {
        out.push(1);
        let i = v as i64;
        put_varint(out, ((i << 1) ^ (i >> 63)) as u64);
    } else {
        out.push(2);
        out.extend_from_slice(&v.to_bits().to_le_bytes());
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Reads a part's bytes; every read is checked against the end.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|e| *e <= self.bytes.len())
            .ok_or("a part ends too soon")?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0_u64;
        for shift in (0..64).step_by(7) {
            let b = self.take(1)?[0];
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a part has a number too long".into())
    }

    /// A count or length, never more than the bytes left (each item takes one byte or more).
    fn len(&mut self) -> Result<usize, String> {
        let n = self.varint()?;
        if n > (self.bytes.len() - self.at) as u64 {
            return Err("a part counts more items than it holds".into());
        }
        Ok(n as usize)
    }

    fn number(&mut self) -> Result<f64, String> {
        match self.take(1)?[0] {
            0 => Ok(0.0),
            1 => {
                let z = self.varint()?;
                Ok((((z >> 1) as i64) ^ -((z & 1) as i64)) as f64)
            }
            2 => {
                let b: [u8; 8] = self.take(8)?.try_into().map_err(|_| "a short number")?;
                Ok(f64::from_bits(u64::from_le_bytes(b)))
            }
            t => Err(format!("a part has a number of unknown kind {t}")),
        }
    }

    fn entry_numbers(&mut self, desc: i64) -> Result<Entry, String> {
        let value = self.number()?;
        let n = self.len()?;
        let samples = (0..n).map(|_| self.number()).collect::<Result<_, _>>()?;
        Ok(Entry {
            desc,
            value,
            samples,
        })
    }

    fn splices<T>(
        &mut self,
        item: impl Fn(&mut Self) -> Result<T, String>,
    ) -> Result<Vec<Splice<T>>, String> {
        let n = self.len()?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.varint()? as usize;
            let delete = self.varint()? as usize;
            let count = self.len()?;
            let insert = (0..count)
                .map(|_| item(self))
                .collect::<Result<Vec<T>, String>>()?;
            out.push(Splice { at, delete, insert });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry(desc: i64, value: f64) -> Entry {
        Entry {
            desc,
            value,
            samples: vec![value, -0.0, 1e300, 0.5],
        }
    }

    #[test]
    fn numbers_of_every_kind_come_back_with_their_bits() {
        let values = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            123456789.0,
            0.1,
            f64::MAX,
            f64::MIN_POSITIVE,
            9.007_199_254_740_992e15,
            -9.007_199_254_740_992e15,
            f64::INFINITY,
            f64::NAN,
        ];
        let metrics: Vec<Entry> = values
            .iter()
            .enumerate()
            .map(|(i, v)| entry(i as i64 * 1000, *v))
            .collect();
        let part = Part::whole(&metrics, &["a".to_string(), "ü".to_string()]);
        let back = decode(&encode(&part)).unwrap();
        assert_eq!(back, part);
        let contents = Contents {
            metrics,
            lines: vec!["a".to_string(), "ü".to_string()],
        };
        assert_eq!(encode_whole(&contents), encode(&part));
        assert_eq!(encode_whole(&Contents::default()), encode(&Part::default()));
    }

    #[test]
    fn a_remapped_part_names_the_new_ids_with_the_same_body() {
        let metrics = vec![
            entry(5, 1.0),
            entry(900, 2.0),
            entry(5, 3.0),
            entry(-2, 0.0),
        ];
        let bytes = encode(&Part::whole(&metrics, &["l".to_string()]));
        assert_eq!(desc_ids(&bytes).unwrap(), vec![-2, 5, 900]);
        let moved = remap(&bytes, |id| Ok(if id == 900 { 1 } else { id + 10 })).unwrap();
        let back = decode(&moved).unwrap();
        let ids: Vec<i64> = back.metrics[0].insert.iter().map(|e| e.desc).collect();
        assert_eq!(ids, vec![15, 1, 15, 8]);
        assert!(remap(&bytes, |_| Err("no".into())).is_err());
    }

    #[test]
    fn a_damaged_part_is_an_error_not_a_panic() {
        let good = encode(&Part::whole(&[entry(1, 2.0)], &["x".to_string()]));
        assert!(decode(&good[..good.len() - 3]).is_err());
        assert!(decode(b"not zlib").is_err());
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(b"PBP1\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f")
            .unwrap();
        assert!(decode(&z.finish().unwrap()).is_err());
        let mut list = vec![1, 2];
        let bad = vec![Splice {
            at: 1,
            delete: 5,
            insert: vec![],
        }];
        assert!(apply(&mut list, bad).is_err());
    }

    /// A unit appended in the middle (as a UnixBench record grows: its scores first, then its
    /// index rows, then every unit's monitor rows) costs splices of the new items only.
    #[test]
    fn a_grown_list_costs_only_what_was_added() {
        let old: Vec<Entry> = (0..3000).map(|i| entry(i, i as f64)).collect();
        let mut new = old.clone();
        new.insert(1, entry(9001, 1.0));
        new[1500] = entry(1500, 7.5);
        new.extend((9100..9400).map(|i| entry(i, 0.0)));
        let part = Part::between(
            &Contents {
                metrics: old.clone(),
                lines: vec![],
            },
            &Contents {
                metrics: new.clone(),
                lines: vec![],
            },
        );
        let changed: usize = part.metrics.iter().map(|s| s.insert.len()).sum();
        assert_eq!(changed, 302);
        let mut c = Contents {
            metrics: old,
            lines: vec![],
        };
        c.apply(part).unwrap();
        assert_eq!(c.metrics, new);
    }

    proptest! {
        #[test]
        fn parts_applied_in_order_rebuild_every_version(
            versions in proptest::collection::vec(
                proptest::collection::vec((0i64..20, 0u8..4), 0..40), 1..6)
        ) {
            let mut stored = Contents::default();
            let mut parts = Vec::new();
            for v in &versions {
                let new = Contents {
                    metrics: v.iter().map(|(d, x)| entry(*d, f64::from(*x))).collect(),
                    lines: v.iter().map(|(d, x)| format!("{d}:{x}")).collect(),
                };
                let part = Part::between(&stored, &new);
                parts.push(encode(&part));
                stored = new;
            }
            let mut read = Contents::default();
            for p in parts {
                read.apply(decode(&p).unwrap()).unwrap();
            }
            prop_assert_eq!(read, stored);
        }
    }
}

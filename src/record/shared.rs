//! Text and parameters a metric shares with every other run's metric of the same kind: a
//! full-index run with its monitors has about 4,000 metrics, and a comparison of 100 runs a
//! side holds 800,000 of them. Each one owning its name, title, unit and parameter map cost
//! 4 MB a run (a parameter map of two entries allocates a whole B-tree node); shared, a
//! metric costs its numbers and a few reference counts. Both read as `&str` and as a
//! `BTreeMap` (they dereference to them), compare, hash and serialise as those do.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A string shared by reference count.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedStr(Arc<str>);

impl SharedStr {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for SharedStr {
    fn default() -> SharedStr {
        SharedStr(Arc::from(""))
    }
}

impl Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<String> for SharedStr {
    fn from(s: String) -> SharedStr {
        SharedStr(Arc::from(s))
    }
}

impl From<&str> for SharedStr {
    fn from(s: &str) -> SharedStr {
        SharedStr(Arc::from(s))
    }
}

impl From<&String> for SharedStr {
    fn from(s: &String) -> SharedStr {
        SharedStr(Arc::from(s.as_str()))
    }
}

impl From<SharedStr> for String {
    fn from(s: SharedStr) -> String {
        s.0.to_string()
    }
}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for SharedStr {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<SharedStr> for str {
    fn eq(&self, other: &SharedStr) -> bool {
        self == &*other.0
    }
}

impl PartialEq<SharedStr> for &str {
    fn eq(&self, other: &SharedStr) -> bool {
        *self == &*other.0
    }
}

impl PartialEq<SharedStr> for String {
    fn eq(&self, other: &SharedStr) -> bool {
        **self == *other.0
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl Serialize for SharedStr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SharedStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SharedStr, D::Error> {
        String::deserialize(d).map(SharedStr::from)
    }
}

/// A metric's parameters (`copies=1`, `test=pipe`), shared by reference count; changed
/// through [`SharedParams::make_mut`], which copies them first when they are shared.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedParams(Arc<BTreeMap<String, String>>);

impl SharedParams {
    /// The map, to change (a copy of its own first if it is shared).
    pub fn make_mut(&mut self) -> &mut BTreeMap<String, String> {
        Arc::make_mut(&mut self.0)
    }

    /// A map of its own.
    pub fn to_map(&self) -> BTreeMap<String, String> {
        (*self.0).clone()
    }
}

impl Deref for SharedParams {
    type Target = BTreeMap<String, String>;
    fn deref(&self) -> &BTreeMap<String, String> {
        &self.0
    }
}

impl AsRef<BTreeMap<String, String>> for SharedParams {
    fn as_ref(&self) -> &BTreeMap<String, String> {
        &self.0
    }
}

impl From<BTreeMap<String, String>> for SharedParams {
    fn from(m: BTreeMap<String, String>) -> SharedParams {
        SharedParams(Arc::new(m))
    }
}

impl FromIterator<(String, String)> for SharedParams {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(it: I) -> SharedParams {
        SharedParams(Arc::new(it.into_iter().collect()))
    }
}

impl<'a> IntoIterator for &'a SharedParams {
    type Item = (&'a String, &'a String);
    type IntoIter = std::collections::btree_map::Iter<'a, String, String>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl PartialEq<BTreeMap<String, String>> for SharedParams {
    fn eq(&self, other: &BTreeMap<String, String>) -> bool {
        *self.0 == *other
    }
}

impl fmt::Debug for SharedParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl Serialize for SharedParams {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for SharedParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SharedParams, D::Error> {
        BTreeMap::deserialize(d).map(SharedParams::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_text_and_params_read_compare_and_serialise_as_their_owned_forms() {
        let s = SharedStr::from("unixbench.score");
        assert_eq!(s, "unixbench.score");
        assert_eq!("unixbench.score", s);
        assert!(s.starts_with("unix"));
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"unixbench.score\"");
        let mut p: SharedParams = [("test".to_string(), "pipe".to_string())]
            .into_iter()
            .collect();
        let q = p.clone();
        p.make_mut().insert("copies".into(), "1".into());
        assert_eq!(q.len(), 1, "a change copies a shared map first");
        assert_eq!(p.get("copies").map(String::as_str), Some("1"));
        let back: SharedParams = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
    }
}

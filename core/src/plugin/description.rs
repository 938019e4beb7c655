//! Sensors' descriptions of their readings, held once however many sensors give the same text:
//! every range sensor of a batch of worlds says the same few hundred bytes of JSON.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, Weak};

/// The texts some reading holds, by a hash of the text (a bucket lists every text of that
/// hash still held; the others are dropped as the bucket is next visited).
static TEXTS: Mutex<BTreeMap<u64, Vec<Weak<str>>>> = Mutex::new(BTreeMap::new());

/// `text`, shared with every other holder of the same text. Takes a lock: for a sensor's
/// first description and its changes, not for every step.
pub(super) fn shared(text: &str) -> Arc<str> {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    // A panic while holding the lock cannot leave the map half-changed.
    let mut texts = TEXTS.lock().unwrap_or_else(|e| e.into_inner());
    let bucket = texts.entry(hasher.finish()).or_default();
    bucket.retain(|w| w.strong_count() > 0);
    if let Some(held) = bucket
        .iter()
        .filter_map(Weak::upgrade)
        .find(|t| **t == *text)
    {
        return held;
    }
    let fresh: Arc<str> = Arc::from(text);
    bucket.push(Arc::downgrade(&fresh));
    fresh
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal texts are one allocation while held; another text is its own; a text nobody
    /// holds any more is made again.
    #[test]
    fn equal_descriptions_are_held_once() {
        let a = shared(r#"{"kind":"range","count":12}"#);
        let b = shared(&String::from(r#"{"kind":"range","count":12}"#));
        assert!(Arc::ptr_eq(&a, &b));
        let c = shared(r#"{"kind":"range","count":16}"#);
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(&*c, r#"{"kind":"range","count":16}"#);
        drop((a, b));
        assert_eq!(
            &*shared(r#"{"kind":"range","count":12}"#),
            r#"{"kind":"range","count":12}"#
        );
    }
}

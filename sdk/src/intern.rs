//! Values held once however many hold them: every world of a batch, or every sensor of one
//! kind, asks for the same few values (a range fan's directions, a reading's description, a
//! subscription's spec). An [`Interned`] table hands out one `Arc` a key while anybody holds
//! it, and forgets it when nobody does.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, Weak};

/// Keys and the values made for them, by a hash of the key; a bucket keeps the entries of its
/// hash still held (the others are dropped whenever the bucket is next visited).
type Buckets<K, T> = BTreeMap<u64, Vec<(K, Weak<T>)>>;

/// A table of shared values by key. Takes a lock: for making things (a plugin's creation, a
/// subscription, a sensor's first description), not for every step.
pub struct Interned<K, T: ?Sized> {
    held: Mutex<Buckets<K, T>>,
}

impl<K, T: ?Sized> Default for Interned<K, T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K, T: ?Sized> Interned<K, T> {
    /// An empty table (usable in a `static`).
    pub const fn new() -> Self {
        Self {
            held: Mutex::new(BTreeMap::new()),
        }
    }
}

impl<K: Hash + Eq, T: ?Sized> Interned<K, T> {
    /// The value held for `key`, or the one `make` makes (kept for the next caller while
    /// anybody holds it); `make`'s error is handed back, and nothing is kept.
    pub fn get_or_try<E>(
        &self,
        key: K,
        make: impl FnOnce(&K) -> Result<Arc<T>, E>,
    ) -> Result<Arc<T>, E> {
        let mut hasher = DefaultHasher::new();
        key.hash(&mut hasher);
        // A panic while holding the lock cannot leave the table half-changed: keep going.
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let bucket = held.entry(hasher.finish()).or_default();
        bucket.retain(|(_, w)| w.strong_count() > 0);
        if let Some(value) = (bucket.iter())
            .find(|(k, _)| *k == key)
            .and_then(|(_, w)| w.upgrade())
        {
            return Ok(value);
        }
        let value = make(&key)?;
        bucket.push((key, Arc::downgrade(&value)));
        Ok(value)
    }

    /// [`Interned::get_or_try`] for a `make` that cannot fail.
    pub fn get(&self, key: K, make: impl FnOnce(&K) -> Arc<T>) -> Arc<T> {
        self.get_or_try(key, |k| Ok::<_, std::convert::Infallible>(make(k)))
            .unwrap_or_else(|never| match never {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One value a key while it is held; another key gets its own; a value nobody holds any
    /// more is made again; a failed make keeps nothing.
    #[test]
    fn a_key_gets_one_value_while_it_is_held() {
        let table: Interned<(u32, u64), [f64]> = Interned::new();
        let mut made = 0;
        let mut make = |k: &(u32, u64)| {
            made += 1;
            Arc::from(vec![f64::from(k.0); k.0 as usize])
        };
        let a = table.get((3, 7), &mut make);
        let b = table.get((3, 7), &mut make);
        assert!(Arc::ptr_eq(&a, &b));
        let c = table.get((4, 7), &mut make);
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(*c, [4.0; 4]);
        drop((a, b));
        assert_eq!(*table.get((3, 7), &mut make), [3.0; 3]);
        assert_eq!(made, 3);
        let failed = table.get_or_try((5, 0), |_| Err("no"));
        assert_eq!(failed.unwrap_err(), "no");
        assert_eq!(*table.get((5, 0), |_| Arc::from(vec![1.0])), [1.0]);
    }
}

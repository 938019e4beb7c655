//! Sensors' descriptions of their readings, held once however many sensors give the same text:
//! every range sensor of a batch of worlds says the same few hundred bytes of JSON.

use std::sync::Arc;

use ssx_sdk::intern::Interned;

/// The texts some reading holds.
static TEXTS: Interned<Box<str>, str> = Interned::new();

/// `text`, shared with every other holder of the same text. Takes a lock: for a sensor's
/// first description and its changes, not for every step.
pub(super) fn shared(text: &str) -> Arc<str> {
    TEXTS.get(text.into(), |t| Arc::from(&**t))
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

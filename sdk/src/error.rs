//! A failed host call ([`Error`]), and the checks and messages of descriptor values every
//! plugin shares.

use crate::abi::*;

/// A failed host call: the status the host returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error(pub SsxStatus);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (status {})", status_message(self.0), self.0)
    }
}

impl std::error::Error for Error {}

impl From<Error> for String {
    fn from(e: Error) -> String {
        e.to_string()
    }
}

/// An overlay call's status: shown (true), nothing shows overlays (false), or the error.
pub(crate) fn shown(status: SsxStatus) -> Result<bool, Error> {
    match status {
        SSX_ERR_NOT_FOUND => Ok(false),
        s => check(s).map(|()| true),
    }
}

pub(crate) fn check(status: SsxStatus) -> Result<(), Error> {
    if status == SSX_OK {
        Ok(())
    } else {
        Err(Error(status))
    }
}

/// `"invalid descriptor: <parser message>"`, without a `" at line L column C"` suffix: the host
/// hands plugins a re-serialised descriptor, so a position in it means nothing to the user, and
/// the host's own message already says where the descriptor is written.
pub fn descriptor_error(e: impl std::fmt::Display) -> String {
    let text = e.to_string();
    let text = text
        .rfind(" at line ")
        .map_or(text.as_str(), |i| &text[..i]);
    format!("invalid descriptor: {text}")
}

/// A number as a person reads it: plain between 0.001 and 1e6, in exponent form beyond (Rust
/// prints 1e-300 as three hundred digits).
pub fn number(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-3..1e6).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// `v` if it lies in `[lo, hi]`, else `"invalid descriptor: 'key' must be from lo to hi, got v"`.
pub fn within(key: &str, v: f64, lo: f64, hi: f64) -> Result<f64, String> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "invalid descriptor: '{key}' must be from {} to {}, got {}",
            number(lo),
            number(hi),
            number(v)
        ))
    }
}

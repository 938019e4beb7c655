//! Why a host call refused, as one type, and the one place where that becomes the status code a
//! plugin receives.

use ssx_sdk::abi::*;

use crate::plugin::CommandError;

/// A host call's refusal. Host functions return `Result<_, Refusal>`; the frame's `host` wrapper
/// turns it into the call's status with [`Refusal::status`]. (A call with a stale handle never
/// reaches a host function's body: `SSX_ERR_INVALID_HANDLE` is answered before it.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub(super) enum Refusal {
    /// Null, not finite, not UTF-8, or otherwise malformed.
    #[error("{}", status_message(SSX_ERR_INVALID_ARGUMENT))]
    InvalidArgument,
    /// Not callable in the calling phase.
    #[error("{}", status_message(SSX_ERR_WRONG_PHASE))]
    WrongPhase,
    /// No such artifact, body, sensor, extension, map or swap.
    #[error("{}", status_message(SSX_ERR_NOT_FOUND))]
    NotFound,
    /// An index out of range, or a caller's buffer too small.
    #[error("{}", status_message(SSX_ERR_OUT_OF_RANGE))]
    OutOfRange,
    /// The extension service called failed (its message goes to the debug log).
    #[error("{}", status_message(SSX_ERR_PLUGIN))]
    Plugin,
}

impl Refusal {
    /// The status code the plugin receives.
    pub(super) fn status(self) -> SsxStatus {
        match self {
            Refusal::InvalidArgument => SSX_ERR_INVALID_ARGUMENT,
            Refusal::WrongPhase => SSX_ERR_WRONG_PHASE,
            Refusal::NotFound => SSX_ERR_NOT_FOUND,
            Refusal::OutOfRange => SSX_ERR_OUT_OF_RANGE,
            Refusal::Plugin => SSX_ERR_PLUGIN,
        }
    }
}

/// A driver's command the buffer refused.
impl From<CommandError> for Refusal {
    fn from(e: CommandError) -> Refusal {
        match e {
            CommandError::Body { .. } | CommandError::Joint { .. } | CommandError::NoBody(_) => {
                Refusal::OutOfRange
            }
            CommandError::NotHeld(_) => Refusal::NotFound,
            CommandError::NoMotor(_)
            | CommandError::Fixed(_)
            | CommandError::NotFinite { .. }
            | CommandError::NotDynamic { .. }
            | CommandError::OwnBody(_)
            | CommandError::HeldElsewhere { .. } => Refusal::InvalidArgument,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_is_its_own_status_and_says_what_the_sdk_says() {
        let all = [
            Refusal::InvalidArgument,
            Refusal::WrongPhase,
            Refusal::NotFound,
            Refusal::OutOfRange,
            Refusal::Plugin,
        ];
        let codes: std::collections::BTreeSet<_> = all.iter().map(|r| r.status()).collect();
        assert_eq!(codes.len(), all.len());
        assert!(!codes.contains(&SSX_OK) && !codes.contains(&SSX_ERR_INVALID_HANDLE));
        for r in all {
            assert_eq!(r.to_string(), status_message(r.status()));
        }
        assert_eq!(
            Refusal::from(CommandError::NotHeld(3)),
            Refusal::NotFound,
            "a detach of a body not held"
        );
    }
}

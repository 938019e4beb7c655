//! The descriptor checks the airframe's parts share, each error naming its field.

/// `v` finite and > 0, or "invalid descriptor: 'name' must be a finite number > 0, got v".
pub(crate) fn positive(name: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(format!(
            "invalid descriptor: '{name}' must be a finite number > 0, got {v}"
        ))
    }
}

/// `v` finite and >= 0, or "invalid descriptor: 'name' must be a finite number >= 0, got v".
pub(crate) fn non_negative(name: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(format!(
            "invalid descriptor: '{name}' must be a finite number >= 0, got {v}"
        ))
    }
}

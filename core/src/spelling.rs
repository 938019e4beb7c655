//! "Did you mean": the closest known name to a misspelt one, and serde's unknown-key messages
//! with it added.

/// The known name closest to `word` by Damerau-Levenshtein distance (a swap of two neighbouring
/// letters counts once), if it is close enough to be a slip of the keyboard: at most one edit
/// for names up to 4 letters, two up to 8, three beyond. Ties go to the earlier candidate.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = match word.chars().count() {
        0..=4 => 1,
        5..=8 => 2,
        _ => 3,
    };
    let lower = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(&lower, &c.to_lowercase()), c))
        .filter(|&(d, c)| d <= limit && c != word)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// serde's `"unknown field `enigne`, expected one of `timestep`, `engine`, ..."` (or `unknown
/// variant`, or `expected `a` or `b``) with `" (did you mean `engine`?)"` after the unknown name
/// when one of the expected names is close. Any other message comes back unchanged.
pub fn suggest(message: &str) -> String {
    try_suggest(message).unwrap_or_else(|| message.to_string())
}

fn try_suggest(message: &str) -> Option<String> {
    let start = ["unknown field `", "unknown variant `"]
        .iter()
        .find_map(|p| message.find(p).map(|i| i + p.len()))?;
    let end = start + message[start..].find('`')?;
    let word = &message[start..end];
    let rest = &message[end + 1..];
    let expected = rest.strip_prefix(", expected ")?;
    // The expected names are the backquoted words of the rest of serde's sentence.
    let names: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let best = closest(word, names.iter().copied())?;
    Some(format!(
        "{}` (did you mean `{best}`?){rest}",
        &message[..end]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slips_of_the_keyboard_find_the_name() {
        let keys = ["timestep", "gravity", "engine", "seed", "artifacts"];
        assert_eq!(closest("enigne", keys), Some("engine"));
        assert_eq!(closest("timstep", keys), Some("timestep"));
        assert_eq!(closest("Gravity", keys), Some("gravity"));
        assert_eq!(closest("colour", keys), None);
        assert_eq!(closest("sed", keys), Some("seed"));
        assert_eq!(closest("x", keys), None);
    }

    #[test]
    fn serde_messages_gain_the_suggestion() {
        assert_eq!(
            suggest("unknown field `enigne`, expected one of `timestep`, `engine`, `seed`"),
            "unknown field `enigne` (did you mean `engine`?), expected one of `timestep`, `engine`, `seed`"
        );
        assert_eq!(
            suggest("unknown field `positon`, expected `position` or `rotation`"),
            "unknown field `positon` (did you mean `position`?), expected `position` or `rotation`"
        );
        assert_eq!(
            suggest(
                "invalid descriptor: unknown variant `ciricle`, expected one of `grid`, `circle`, `random`"
            ),
            "invalid descriptor: unknown variant `ciricle` (did you mean `circle`?), expected one of `grid`, `circle`, `random`"
        );
        // Nothing close, or not serde's sentence: unchanged.
        let far = "unknown field `zzzzzz`, expected one of `timestep`, `engine`";
        assert_eq!(suggest(far), far);
        assert_eq!(
            suggest("missing field `timestep`"),
            "missing field `timestep`"
        );
        assert_eq!(
            suggest("unknown field `a`, there are no fields"),
            "unknown field `a`, there are no fields"
        );
    }
}

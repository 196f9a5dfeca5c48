//! The words of messages: counts and plurals.

/// `1 file`, `2 files`; `1 change`, `0 changes`: the one pluraliser.
pub fn count(n: usize, noun: &str) -> String {
    format!("{n} {}", plural(n, noun))
}

/// [`count`] for a phrase whose plural is not regular.
pub fn count_as(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The noun for `n` of it (English regular plurals, and `-ss`/`-x` nouns).
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        noun.to_string()
    } else if noun.ends_with("ss") || noun.ends_with('x') || noun.ends_with("sh") {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

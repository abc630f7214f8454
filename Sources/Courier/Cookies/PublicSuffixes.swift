import CCurlShim

/// Which domains are public suffixes — `com`, `co.uk`, `github.io` — on which no cookie may be
/// set for every site below them.
///
/// The list is the one of libpsl, which libcurl links on Linux: Courier opens the library at
/// run time the first time it needs it (no build dependency) and loads the system's list,
/// else libpsl's built-in one. Without libpsl (a system without it, or whose libpsl has no
/// list) Courier cannot tell `co.uk` from `example.co.uk`, so it takes every domain for a
/// public suffix: a `Domain` attribute then makes a cookie host-only for its own host and is
/// ignored for any other, so no cookie is ever shared across hosts by mistake.
enum PublicSuffixes {
    /// Whether `domain` (lower case, no leading dot, not an IP address) is a public suffix.
    static func contains(_ domain: String) -> Bool {
        courier_is_public_suffix(domain) != 0
    }
}

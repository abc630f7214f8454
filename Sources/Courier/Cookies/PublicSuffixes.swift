import CCurlShim

/// Which domains are public suffixes — `com`, `co.uk`, `github.io` — on which no cookie may be
/// set for every site below them.
///
/// The list is the one of libpsl, which libcurl links on Linux: Courier opens the library at
/// run time the first time it needs it (no build dependency) and loads the system's list,
/// else libpsl's built-in one. Without libpsl Courier falls back to a coarse rule: a domain
/// without an inner dot (`com`, `localhost`) is a public suffix; multi-label suffixes such as
/// `co.uk` are then not recognised.
enum PublicSuffixes {
    /// Whether `domain` (lower case, no leading dot, not an IP address) is a public suffix.
    static func contains(_ domain: String) -> Bool {
        switch courier_is_public_suffix(domain) {
        case 1: true
        case 0: false
        default: !domain.utf8.contains(UInt8(ascii: "."))
        }
    }
}

#if CommandLine
import Courier
import Foundation

/// What `courier pin` prints: the chain with its pins, and the pair to pin.
///
/// The recommendation: pin the key of the CA that issued the leaf, which survives every
/// renewal of the leaf, with the root's key as the backup, so that a new intermediate of the
/// same root does not lock clients out. A chain of two pins the root and the leaf; a lone
/// self-signed certificate needs a spare key of your own as its backup.
struct PinReport {
    let host: String
    let port: Int
    let chain: [ServerCertificate]

    /// The index of the certificate to pin.
    var primary: Int? { chain.isEmpty ? nil : (chain.count > 1 ? 1 : 0) }

    /// The index of the backup pin, when the chain offers one.
    var backup: Int? {
        guard chain.count > 1 else { return nil }
        return chain.count > 2 ? chain.count - 1 : 0
    }

    func text(now: Date) -> String {
        var lines = ["\(host):\(port): verified chain, leaf first"]
        for (index, certificate) in chain.enumerated() {
            var mark = ""
            if index == primary { mark = "   <- pin this" }
            if index == backup { mark = "   <- backup pin" }
            let days = Int((certificate.notValidAfter.timeIntervalSince(now) / 86_400).rounded(.down))
            let expiry = days >= 0 ? "in \(days) days" : "EXPIRED \(-days) days ago"
            lines.append("")
            lines.append("[\(index)] \(certificate.subject)\(mark)")
            lines.append("    issuer   \(certificate.issuer)")
            lines.append("    expires  \(Self.date(certificate.notValidAfter)) (\(expiry))")
            lines.append("    pin      \(certificate.pin)")
        }
        lines.append("")
        if backup == nil {
            lines.append("Pin a backup key too: a spare key you hold, SPKIPin(certificateFile:).")
        } else {
            lines.append("Pin both marked keys: courier get --pin <pin this> --pin <backup pin> URL")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A `TrustPolicy(...)` expression with the recommended pins, to paste into Swift code.
    var swift: String {
        var pins: [(ServerCertificate, String)] = []
        if let primary { pins.append((chain[primary], "pin")) }
        if let backup { pins.append((chain[backup], "backup")) }
        var lines = ["try TrustPolicy("]
        lines.append("    host: \(Self.literal(host)),")
        if port != 443 { lines.append("    port: \(port),") }
        lines.append("    pins: [")
        for (certificate, role) in pins {
            lines.append(
                "        try SPKIPin(\(Self.literal(certificate.pin.description))),  // \(role): \(certificate.subject)"
            )
        }
        lines.append("    ]")
        lines.append(")")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func literal(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    private static func date(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: date)
    }
}
#endif

import Foundation

extension Report {
    /// The clients of the authenticated comparison, cheapest first: `Session.send` without
    /// auth, `ResourceAccess` with a bearer token, the same with a DPoP proof.
    static let authenticatedClients = ["courier", "courier-access", "courier-dpop"]

    /// What authentication adds to a request, cell by cell: the bearer path over plain
    /// `Session.send`, and the DPoP proof over the bearer path — in CPU µs per request, req/s
    /// and peak RSS.
    ///
    /// Each difference is taken within a round (the clients of a cell run back to back there,
    /// so they saw the same load on the machine) and the median over the rounds is shown, with
    /// the lowest and highest in parentheses. The per-client columns are the runs with the
    /// median req/s, as in the results table. Empty when no cell ran `courier-access` or
    /// `courier-dpop`.
    func authenticatedCosts() -> String {
        let table = summaries()
        let authCells = cells.filter {
            table[$0]?["courier-access"] != nil || table[$0]?["courier-dpop"] != nil
        }
        guard !authCells.isEmpty else { return "" }
        var md = "\n## Authenticated requests: bearer token and DPoP proof\n\n"
        md += "Session = courier (`Session.send`, no auth, unpinned); bearer = courier-access "
        md += "(`ResourceAccess.deviceClient.sendAnonymousRequest`, device token already in the store, "
        md += "secured transport pinning the test CA); DPoP = courier-dpop (the same with the device client's "
        md += "DPoP key, the stored token bound to it: a fresh ES256 proof per request). No token request is "
        md += "made in any run. Differences in CPU µs per request: per round (the clients of a cell run back "
        md += "to back), median over the rounds, (lowest…highest) round. RSS: peak of the client process.\n\n"
        md += "| Protocol | Conc. | Session µs/req | bearer µs/req | DPoP µs/req "
        md += "| bearer − Session µs/req | DPoP − bearer µs/req "
        md += "| Session req/s | bearer req/s | DPoP req/s | DPoP/bearer req/s | RSS MiB Session / bearer / DPoP |\n"
        md += "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n"
        for cell in authCells {
            let median = Self.authenticatedClients.map { value(table, cell, $0) }
            let (plain, bearer, dpop) = (median[0], median[1], median[2])
            func cpu(_ r: RunResult?) -> String { r.map { fmt($0.cpuMicrosPerRequest, 1) } ?? "–" }
            func rate(_ r: RunResult?) -> String { r.map { fmt($0.requestsPerSecond, 0) } ?? "–" }
            func rss(_ r: RunResult?) -> String { r.map { fmt($0.maxRSSMiB, 1) } ?? "–" }
            let rateRatio: String
            if let dpop, let bearer, bearer.requestsPerSecond > 0 {
                rateRatio = fmt(dpop.requestsPerSecond / bearer.requestsPerSecond, 2) + "×"
            } else {
                rateRatio = "–"
            }
            md += "| \(cell.proto.title) | \(cell.concurrency) | \(cpu(plain)) | \(cpu(bearer)) | \(cpu(dpop)) "
            md += "| \(pairedDifference(in: cell, "courier-access", minus: "courier")) "
            md += "| \(pairedDifference(in: cell, "courier-dpop", minus: "courier-access")) "
            md += "| \(rate(plain)) | \(rate(bearer)) | \(rate(dpop)) | \(rateRatio) "
            md += "| \(rss(plain)) / \(rss(bearer)) / \(rss(dpop)) |\n"
        }
        return md
    }

    /// The CPU µs per request of `client` minus `baseline`'s in the same round of `cell`:
    /// `median (lowest…highest)` over the rounds where both ran without failing, or `–`.
    private func pairedDifference(in cell: Cell, _ client: String, minus baseline: String) -> String {
        func byRound(_ name: String) -> [Int: RunResult] {
            let runs = results.filter { $0.cell == cell && $0.client == name && $0.failure == nil && $0.requests > 0 }
            return Dictionary(runs.map { ($0.round, $0) }, uniquingKeysWith: { first, _ in first })
        }
        let mine = byRound(client)
        let theirs = byRound(baseline)
        let differences = mine.compactMap { round, run in
            theirs[round].map { run.cpuMicrosPerRequest - $0.cpuMicrosPerRequest }
        }.sorted()
        guard !differences.isEmpty else { return "–" }
        let median = differences[differences.count / 2]
        guard differences.count > 1 else { return fmt(median, 1) }
        return "\(fmt(median, 1)) (\(fmt(differences.first!, 1))…\(fmt(differences.last!, 1)))"
    }
}

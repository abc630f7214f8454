import Courier
import Foundation
import HTTPTypes

let port = CommandLine.arguments[1]
let session = Session(configuration: .init(baseURL: URL(string: "http://127.0.0.1:\(port)")!))
let response = try await session.send(HTTPRequest(method: .get, path: "/Package.swift"))
print(response.status, response.data.count, response.metrics as Any)
let r2 = try await session.send(HTTPRequest(method: .get, path: "/Package.swift"))
print(r2.status, r2.headerFields, r2.metrics!.isConnectionReused)
await withTaskGroup(of: Int.self) { group in
    for _ in 0..<50 { group.addTask { (try? await session.send(HTTPRequest(method: .get, path: "/Package.swift")).data.count) ?? -1 } }
    var counts: [Int] = []
    for await c in group { counts.append(c) }
    print(Set(counts))
}
await session.shutdown()

import Crypto
import Foundation
import FuzzSupport

// The encrypted token store's file format, in its two layers: the sealed envelope (header,
// key id, length, nonce, ciphertext, tag) and the decrypted JSON document. The first byte of
// the input picks the layer: even opens the rest as a sealed file with a fixed key, odd
// decodes the rest as a document and uses it as the store does.
@testable import Courier

/// The key the seed files are sealed with, and the entry the target looks up.
enum Fixture {
    // SymmetricKey is not Sendable; libFuzzer calls the target from one thread.
    nonisolated(unsafe) static let key = SymmetricKey(data: [UInt8](repeating: 7, count: 32))
    static let sealer = TokenSealer(keyProvider: .key(key), location: "fuzz")
    static let storeKey = TokenStoreKey(clientID: "fuzz", level: .user, user: "u")
}

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzTokenStoreFile(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    guard let selector = input.bytes.first else { return 0 }
    let rest = Data(input.bytes.dropFirst())
    if selector & 1 == 0 {
        do {
            _ = try Fixture.sealer.open(rest, key: Fixture.key)
        } catch is CourierError {
        } catch {
            preconditionFailure("not a CourierError: \(error)")
        }
        return 0
    }
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .secondsSince1970
    // The store refuses a document that is not writable before it uses it.
    guard var document = try? decoder.decode(EncryptedFileTokenStore.Document.self, from: rest), document.isWritable
    else { return 0 }
    let entry = document.entry(for: Fixture.storeKey)
    _ = entry.token?.needsRenewal(at: Date(), leeway: .seconds(30))
    document.set(nil, for: Fixture.storeKey)
    for existing in document.entries { _ = document.entry(for: existing.key) }
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .secondsSince1970
    _ = try? encoder.encode(document)
    return 0
}

Fuzzer.run(fuzzTokenStoreFile)

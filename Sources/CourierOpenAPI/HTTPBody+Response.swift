#if OpenAPI
import Courier
import HTTPTypes
import OpenAPIRuntime

extension HTTPBody {
    /// The streamed body of `response` for the generated client, or `nil` when the method's
    /// response has none (HEAD, CONNECT, TRACE), as the runtime's other transports do.
    ///
    /// The length is the `Content-Length` unless a `Content-Encoding` was decoded, when the
    /// field counts the encoded bytes rather than those the body yields.
    convenience init?(streaming response: Response, of method: HTTPRequest.Method) {
        switch method {
        case .head, .connect, .trace: return nil
        default: break
        }
        let fields = response.headerFields
        let encoded = fields[.contentEncoding].map { $0.lowercased() != "identity" } ?? false
        let length: HTTPBody.Length =
            if !encoded, let value = fields[.contentLength], let count = Int64(value) {
                .known(count)
            } else {
                .unknown
            }
        self.init(response.body, length: length, iterationBehavior: .single)
    }
}
#endif

#if CommandLine
import Courier
import HTTPTypes

/// The response head as curl's `-i` prints it: the status line, the fields, a blank line.
struct ResponseHead {
    let response: Response

    var text: String {
        let version = response.metrics?.httpVersion ?? .unknown
        let protocolName = version == .unknown ? "HTTP" : version.rawValue
        let reason = response.status.reasonPhrase
        var lines = ["\(protocolName) \(response.statusCode)" + (reason.isEmpty ? "" : " " + reason)]
        for field in response.headerFields {
            lines.append("\(field.name.rawName): \(field.value)")
        }
        return lines.joined(separator: "\r\n") + "\r\n\r\n"
    }
}
#endif

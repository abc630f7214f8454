internal import CCurlShim

extension CurlTransfer {
    /// What libcurl measured of the transfer (loop thread, while the handle is attached).
    func metrics() -> Response.Metrics? {
        guard let handle else { return nil }
        let easy = handle.pointer
        func time(_ info: CURLINFO) -> Duration {
            var value: Int64 = 0
            _ = ccurl_easy_getinfo_off_t(easy, info, &value)
            return .microseconds(value)
        }
        func offT(_ info: CURLINFO) -> Int64 {
            var value: Int64 = 0
            _ = ccurl_easy_getinfo_off_t(easy, info, &value)
            return value
        }
        func long(_ info: CURLINFO) -> Int {
            var value = 0
            _ = ccurl_easy_getinfo_long(easy, info, &value)
            return value
        }
        return Response.Metrics(
            nameLookup: time(CURLINFO_NAMELOOKUP_TIME_T),
            connect: time(CURLINFO_CONNECT_TIME_T),
            tlsHandshake: time(CURLINFO_APPCONNECT_TIME_T),
            timeToFirstByte: time(CURLINFO_STARTTRANSFER_TIME_T),
            total: time(CURLINFO_TOTAL_TIME_T),
            bytesSent: offT(CURLINFO_SIZE_UPLOAD_T),
            bytesReceived: offT(CURLINFO_SIZE_DOWNLOAD_T),
            httpVersion: handle.httpVersion,
            isConnectionReused: long(CURLINFO_NUM_CONNECTS) == 0
        )
    }
}

internal import CCurlShim

/// libcurl's callbacks. They run on the loop thread; `userdata` is the ``CurlTransfer``,
/// which the loop keeps alive while its easy handle is in the multi handle.
///
/// Static members of a nonisolated type, so that Swift 6 does not infer an actor for them.
enum CurlCallbacks {
    static let write: ccurl_data_callback = { buffer, size, count, userdata in
        guard let userdata else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: size * count))
    }

    static let header: ccurl_data_callback = { buffer, size, count, userdata in
        guard let userdata else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        // Any other count than the line's length aborts the transfer.
        return transfer.receiveHeader(UnsafeRawBufferPointer(start: buffer, count: size * count)) ? size * count : 0
    }

    static let read: ccurl_data_callback = { buffer, size, count, userdata in
        guard let userdata, let buffer else { return Int(ccurl_readfunc_abort()) }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.readUpload(UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
    }

    static let progress: ccurl_xferinfo_callback = { userdata, downloadTotal, downloaded, uploadTotal, uploaded in
        guard let userdata else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        transfer.progress(
            downloadTotal: downloadTotal,
            downloaded: downloaded,
            uploadTotal: uploadTotal,
            uploaded: uploaded
        )
        return 0
    }

    /// Called before each attempt to send the request, on a new or a reused connection:
    /// more than one call means libcurl retried the transfer, which the transfer may refuse.
    static let prerequest: ccurl_prereq_callback = { userdata, _, _, _, _ in
        guard let userdata else { return ccurl_prereqfunc_ok() }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.beginSendAttempt() ? ccurl_prereqfunc_ok() : ccurl_prereqfunc_abort()
    }

    /// libcurl's informational text, which alone tells that an HTTP/2 server refused a stream
    /// (set only on transfers that need to know; see ``CurlTransfer/readInformation(_:)``). The
    /// text holds the request's header fields, credentials included: never log or keep it.
    static let debug: ccurl_debug_callback = { _, type, data, size, userdata in
        guard type == CURLINFO_TEXT, let data, let userdata else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        transfer.readInformation(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }

    /// Appends the request body's trailer fields once its last chunk went out.
    static let trailers: ccurl_trailer_callback = { list, userdata in
        guard let userdata else { return ccurl_trailerfunc_abort() }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.appendTrailers(to: &list.pointee) ? ccurl_trailerfunc_ok() : ccurl_trailerfunc_abort()
    }

    /// Rewinds the request body when libcurl sends the request again.
    static let seek: ccurl_seek_callback = { userdata, offset, origin in
        guard let userdata, origin == SEEK_SET else { return ccurl_seekfunc_cantseek() }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.rewindUpload(to: offset) ? ccurl_seekfunc_ok() : ccurl_seekfunc_cantseek()
    }
}

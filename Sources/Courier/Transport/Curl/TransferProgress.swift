/// Turns libcurl's progress callbacks into the progress a ``TransferControl`` reports: every
/// upload step, downloads in steps of 64 KiB and the last byte.
///
/// A value kept inside its transfer; it remembers only what it reported last.
struct TransferProgress {
    private var lastDownload: Int64 = -1
    private var lastUpload: Int64 = -1

    /// Reports what changed since the last call that is worth reporting.
    mutating func update(
        downloadTotal: Int64,
        downloaded: Int64,
        uploadTotal: Int64,
        uploaded: Int64,
        to control: TransferControl
    ) {
        if uploaded != lastUpload, uploaded > 0 || uploadTotal > 0 {
            lastUpload = uploaded
            control.reportUpload(
                NetworkTask.Progress(completedBytes: uploaded, expectedBytes: uploadTotal > 0 ? uploadTotal : nil)
            )
        }
        // Report downloads in steps of 64 KiB, and the last byte.
        if downloaded != lastDownload,
            downloaded - lastDownload >= 65_536 || (downloadTotal > 0 && downloaded == downloadTotal)
        {
            lastDownload = downloaded
            control.reportDownload(
                NetworkTask.Progress(completedBytes: downloaded, expectedBytes: downloadTotal > 0 ? downloadTotal : nil)
            )
        }
    }

    /// Reports the last step of a download that ended with `received` bytes, also for a body
    /// too short for a 64 KiB step.
    mutating func finish(received: Int64, to control: TransferControl) {
        guard received > 0, received != lastDownload else { return }
        lastDownload = received
        control.reportDownload(NetworkTask.Progress(completedBytes: received, expectedBytes: received))
    }

    /// Forgets what was reported: the transfer goes again on a fresh connection.
    mutating func reset() {
        self = TransferProgress()
    }
}

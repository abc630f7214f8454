/// The transfers of one origin (`scheme://authority`) in a ``CurlMultiLoop``: how many hold
/// an easy handle, and those waiting, in order, for one of them to end.
///
/// libcurl queues transfers beyond its connection limits itself, but each of them already
/// holds an easy handle (about 13 KB). Waiting here costs only the transfer, so ten thousand
/// requests in flight do not mean ten thousand easy handles. Loop thread only.
struct CurlOriginSlots {
    /// Transfers of the origin that hold an easy handle.
    var attached = 0
    private var waiting: [CurlTransfer] = []
    private var head = 0

    /// Whether nothing of the origin is attached or waiting (the entry can go).
    var isIdle: Bool { attached == 0 && head == waiting.count }

    /// The waiting transfers, oldest first; may include ones that were cancelled meanwhile.
    var queued: ArraySlice<CurlTransfer> { waiting[head...] }

    mutating func enqueue(_ transfer: CurlTransfer) {
        waiting.append(transfer)
    }

    /// The oldest waiting transfer.
    mutating func dequeue() -> CurlTransfer? {
        guard head < waiting.count else { return nil }
        let transfer = waiting[head]
        head += 1
        if head == waiting.count {
            waiting.removeAll()
            head = 0
        } else if head >= 1024, head * 2 >= waiting.count {
            waiting.removeFirst(head)  // amortised: the array does not grow without bound
            head = 0
        }
        return transfer
    }
}

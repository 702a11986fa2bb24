import CShim

#if canImport(Glibc)
    import Glibc
#endif

/// Sending a batch: slots are grouped into messages, each a run of slots to
/// one destination from one source, equal in length except a shorter last
/// one, sent as one UDP_SEGMENT message whose iovecs point at the slots in
/// place (no copy). Groups are formed in queue order and a destination's
/// next group starts only after its previous one closed, so datagrams to
/// one destination leave in the order they were queued; across
/// destinations the order may change, which UDP allows anyway.
extension DatagramBatch {
    /// Sends the first `count` slots on `descriptor` with as few `sendmmsg`
    /// calls as the kernel allows, grouped when `segmentation.enabled`,
    /// then empties the batch. A destination the kernel refuses costs that
    /// message; a full socket buffer (EAGAIN) drops the rest of the batch
    /// rather than spinning: late media is useless media.
    func transmit(
        on descriptor: Int32, mapIPv4: Bool = false, localAddresses: Bool = false, segmentation: inout UDPSegmentation
    ) -> (sent: Int, dropped: Int) {
        guard count > 0 else { return (0, 0) }
        let total = count
        count = 0
        if mapIPv4 {
            for i in 0..<total where Int32(addresses[i].ss_family) == AF_INET {
                if let a = SocketAddress(storage: addresses[i]) {
                    addresses[i] = SocketAddress(a.transportAddress, mappedToIPv6: true).storage
                }
            }
        }
        var messageCount = planGroups(count: total, grouping: segmentation.enabled)
        layMessages(messageCount, localAddresses: localAddresses)
        var done = 0, sent = 0
        while done < messageCount {
            segmentation.sendCalls += 1
            let n = swiftlet_sendmmsg(
                descriptor, headers + done * swiftlet_mmsghdr_size(), UInt32(messageCount - done), 0)
            if n > 0 {
                for m in done..<done + Int(n) {
                    let segments = Int(messageStart[m + 1] - messageStart[m])
                    sent += segments
                    if segments > 1 {
                        segmentation.messages += 1
                        segmentation.segments += segments
                    }
                }
                done += Int(n)
                continue
            }
            let e = errno
            if n < 0 && e == EINTR { continue }
            if n < 0 && (e == EAGAIN || e == EWOULDBLOCK) { break }
            if n < 0 && (e == EIO || e == EINVAL) && messageStart[done + 1] - messageStart[done] > 1 {
                // The kernel will not segment here: send the rest one
                // datagram a message, and never group on this socket again.
                segmentation.enabled = false
                segmentation.fallbacks = 1
                messageCount = splitRemaining(from: done, messageCount: messageCount, localAddresses: localAddresses)
                continue
            }
            done += 1
        }
        return (sent, total - sent)
    }

    /// Fills `groupOf`-ordered `order` and `messageStart`: message m holds
    /// the slots `order[messageStart[m]..<messageStart[m+1]]`. Returns the
    /// number of messages.
    private func planGroups(count n: Int, grouping: Bool) -> Int {
        var groups = 0
        routeGeneration &+= 1
        if routeGeneration == 0 {
            routeStamp.update(repeating: 0)
            routeGeneration = 1
        }
        let mask = routeGroup.count - 1
        for i in 0..<n {
            let length = lengths[i]
            var joined = false
            var entry = -1
            if grouping {
                // The latest group to this route is the only one it may join.
                entry = routeHash(i) & mask
                var g = -1
                while routeStamp[entry] == routeGeneration {
                    if sameRoute(Int(groupHead[Int(routeGroup[entry])]), i) {
                        g = Int(routeGroup[entry])
                        break
                    }
                    entry = (entry + 1) & mask
                }
                // A datagram too large to be a segment still becomes its
                // route's latest group, so nothing queued after it joins an
                // earlier group and overtakes it.
                if g >= 0 && length <= UDPSegmentation.maxSegmentBytes && !groupClosed[g]
                    && groupCount[g] < Int32(UDPSegmentation.maxSegments)
                    && Int(groupBytes[g]) + length <= UDPSegmentation.maxMessageBytes
                    && length <= Int(groupSegment[g])
                {
                    nextInGroup[Int(groupTail[g])] = Int32(i)
                    groupTail[g] = Int32(i)
                    groupCount[g] += 1
                    groupBytes[g] += Int32(length)
                    // Only the last segment may be shorter (udp(7)).
                    if length < Int(groupSegment[g]) { groupClosed[g] = true }
                    joined = true
                }
            }
            if entry >= 0 && !joined {
                routeStamp[entry] = routeGeneration
                routeGroup[entry] = Int32(groups)
            }
            nextInGroup[i] = -1
            if joined { continue }
            groupHead[groups] = Int32(i)
            groupTail[groups] = Int32(i)
            groupCount[groups] = 1
            groupBytes[groups] = Int32(length)
            groupSegment[groups] = Int32(length)
            groupClosed[groups] = !grouping || length > UDPSegmentation.maxSegmentBytes || length == 0
            groups += 1
        }
        var k: Int32 = 0
        for g in 0..<groups {
            messageStart[g] = k
            var s = groupHead[g]
            while s >= 0 {
                order[Int(k)] = s
                k += 1
                s = nextInGroup[Int(s)]
            }
        }
        messageStart[groups] = k
        return groups
    }

    /// A hash of slot `i`'s destination (port and address: the first
    /// bytes of a sockaddr_in or sockaddr_in6, zero-padded in storage).
    private func routeHash(_ i: Int) -> Int {
        let raw = UnsafeRawPointer(addresses.baseAddress! + i)
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for offset in stride(from: 0, to: 32, by: 8) {
            h = (h ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x1000_0000_01b3
        }
        return Int(truncatingIfNeeded: h ^ (h >> 29))
    }

    /// Whether slots `a` and `b` go to the same destination from the same
    /// source (only a sockaddr_in6's bytes can differ: the rest is zero).
    private func sameRoute(_ a: Int, _ b: Int) -> Bool {
        guard addresses[a].ss_family == addresses[b].ss_family, locals[a].ss_family == locals[b].ss_family else {
            return false
        }
        let size = MemoryLayout<sockaddr_in6>.size
        return memcmp(addresses.baseAddress! + a, addresses.baseAddress! + b, size) == 0
            && (locals[a].ss_family == 0 || memcmp(locals.baseAddress! + a, locals.baseAddress! + b, size) == 0)
    }

    /// Points the kernel headers at the planned messages.
    private func layMessages(_ messageCount: Int, localAddresses: Bool) {
        for m in 0..<messageCount {
            let first = Int(messageStart[m]), end = Int(messageStart[m + 1])
            for k in first..<end {
                let slot = Int(order[k])
                iovecs[k] = iovec(iov_base: buffers.baseAddress! + slot * slotSize, iov_len: lengths[slot])
            }
            let head = Int(order[first])
            let segment = end - first > 1 ? UInt16(lengths[head]) : 0
            layMessage(m, iovecAt: first, iovecCount: end - first, slot: head, segment: segment, localAddresses: localAddresses)
        }
    }

    private func layMessage(_ m: Int, iovecAt k: Int, iovecCount: Int, slot: Int, segment: UInt16, localAddresses: Bool) {
        let address = SocketAddress(storage: addresses[slot])?.length ?? 0
        let source: UnsafePointer<sockaddr_storage>? =
            localAddresses && locals[slot].ss_family != 0 ? UnsafePointer(locals.baseAddress! + slot) : nil
        swiftlet_gso_set_message(
            headers, UInt32(m), iovecs.baseAddress! + k, iovecCount, UnsafeMutableRawPointer(addresses.baseAddress! + slot),
            address, messageControls + m * messageControlSpace, source, segment)
    }

    /// After a refused segmented message `from`: one message per remaining
    /// datagram, in the same order, starting at message `from`. Returns the
    /// new message count. There is room: messages never outnumber slots.
    private func splitRemaining(from: Int, messageCount: Int, localAddresses: Bool) -> Int {
        let first = Int(messageStart[from]), end = Int(messageStart[messageCount])
        var m = from
        for k in first..<end {
            messageStart[m] = Int32(k)
            layMessage(m, iovecAt: k, iovecCount: 1, slot: Int(order[k]), segment: 0, localAddresses: localAddresses)
            m += 1
        }
        messageStart[m] = Int32(end)
        return m
    }
}

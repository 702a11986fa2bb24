// Transport floor benchmark (Scripts/bench-transport): what SRTP and plain
// UDP on loopback cost on this machine before any forwarding logic.
// Usage: TransportBench [--packets N] [--runs R] [--udp-seconds S]
//                       [--skip-srtp] [--skip-udp] [--feedback ITERATIONS]
//                       [--ice-tcp PACKETS] [--srtp-backend openssl|libsrtp2|both]
//                       [--srtp-profile cm|gcm|both]
// --srtp-backend / --srtp-profile pick the SRTP rows; with one of each and
// --skip-udp, two runs under malloc_count.c with different --packets give
// allocations per packet as the difference of the totals.
// --ice-tcp adds the ICE-TCP echo (ICETCPBench.swift): RFC 4571 frames
// through a worker's TCP port and back, ns and allocations per packet.
// --gso FRAMES [--gso-mode on|off|both] adds the UDP GSO send bench
// (GSOBench.swift): frames of 8 datagrams to 40 loopback subscribers; run
// one mode at a time under `perf stat` for instructions and system time.
// --feedback adds the transport-cc feedback benchmark (FeedbackBench.swift);
// run it under Scripts/bench-support/malloc_count.c (LD_PRELOAD and
// MALLOC_COUNT_FILE) for allocations per feedback.
import Foundation
import SRTP
import Wire

var packets = 200_000
var runs = 5
var udpSeconds = 2
var doSRTP = true, doUDP = true
var feedbackIterations = 0
var iceTCPPackets = 0
var gsoFrames = 0
var gsoModes = [true, false]
var srtpBackends = SRTPBackend.allCases
var srtpProfiles = SRTPProfile.allCases
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let a = arguments.next() {
    switch a {
    case "--packets": packets = Int(arguments.next() ?? "") ?? packets
    case "--runs": runs = max(1, Int(arguments.next() ?? "") ?? runs)
    case "--udp-seconds": udpSeconds = max(1, Int(arguments.next() ?? "") ?? udpSeconds)
    case "--skip-srtp": doSRTP = false
    case "--skip-udp": doUDP = false
    case "--feedback": feedbackIterations = max(1, Int(arguments.next() ?? "") ?? 1000)
    case "--gso": gsoFrames = max(1, Int(arguments.next() ?? "") ?? 10_000)
    case "--gso-mode":
        switch arguments.next() {
        case "on": gsoModes = [true]
        case "off": gsoModes = [false]
        default: gsoModes = [true, false]
        }
    case "--ice-tcp": iceTCPPackets = max(32, Int(arguments.next() ?? "") ?? 100_000)
    case "--srtp-backend":
        let v = arguments.next() ?? ""
        if v != "both" {
            guard let b = SRTPBackend(rawValue: v) else { print("--srtp-backend: openssl, libsrtp2 or both"); exit(2) }
            srtpBackends = [b]
        }
    case "--srtp-profile":
        switch arguments.next() ?? "" {
        case "cm": srtpProfiles = [.aesCM128HMACSHA1_80]
        case "gcm": srtpProfiles = [.aeadAES128GCM]
        case "both": break
        default: print("--srtp-profile: cm, gcm or both"); exit(2)
        }
    default:
        print("unknown argument \(a)")
        exit(2)
    }
}

func format(_ v: Double, _ decimals: Int = 0) -> String { String(format: "%.\(decimals)f", v) }

func name(_ p: SRTPProfile) -> String {
    switch p {
    case .aesCM128HMACSHA1_80: "AES_CM_128_HMAC_SHA1_80"
    case .aeadAES128GCM: "AEAD_AES_128_GCM"
    }
}

if doSRTP {
    print("SRTP, 1200-byte RTP packets, \(packets) packets per run, median of \(runs) runs, one thread")
    print("")
    print(
        "| Backend | Profile | protect ns/pkt | protect pkt/s | unprotect ns/pkt | unprotect pkt/s | both pkt/s | runs (protect/unprotect ns) |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for backend in srtpBackends {
        for profile in srtpProfiles {
            do {
                let results = try SRTPBench(profile: profile, backend: backend, packetsPerRun: packets).run(runs: runs)
                let p = median(results.map(\.protectNanoseconds))
                let u = median(results.map(\.unprotectNanoseconds))
                let each = results.map { "\(format($0.protectNanoseconds))/\(format($0.unprotectNanoseconds))" }
                    .joined(separator: " ")
                print(
                    "| \(backend) | \(name(profile)) | \(format(p)) | \(format(1e9 / p)) | \(format(u)) | \(format(1e9 / u)) | \(format(1e9 / (p + u))) | \(each) |"
                )
            } catch {
                print("| \(backend) | \(name(profile)) | failed: \(error) |")
            }
        }
    }
    print("")
}

if doUDP {
    print("UDP over 127.0.0.1, 1200-byte datagrams, one sender thread, one receiver thread, \(udpSeconds) s each")
    print("")
    print("| Mode | sent/s | received/s | received | lost | receive buffer |")
    print("|---|---:|---:|---:|---:|---:|")
    for (batch, wildcard) in [(1, false), (32, false), (32, true)] {
        do {
            let r = try UDPBench(batch: batch, duration: .seconds(udpSeconds), wildcard: wildcard).run()
            let mode =
                batch == 1
                ? "plain (1 per call)"
                : "batched (\(batch) per sendmmsg/recvmmsg)\(wildcard ? ", wildcard :: with PKTINFO" : "")"
            let lost = r.sent > 0 ? 100 * Double(r.sent - r.received) / Double(r.sent) : 0
            print(
                "| \(mode) | \(format(Double(r.sent) / r.seconds)) | \(format(Double(r.received) / r.seconds)) | \(r.received) | \(format(lost, 1)) % | \(r.receiveBuffer) B |"
            )
        } catch {
            print("| batch \(batch) | failed: \(error) |")
        }
    }
}

if feedbackIterations > 0 {
    let r = FeedbackBench(iterations: feedbackIterations).run()
    print("Transport-cc feedback, \(feedbackIterations) iterations, one thread")
    print("")
    print("| load | µs per compound | statuses walked | allocations |")
    print("|---|---:|---:|---:|")
    print(
        "| hostile 1200-byte compound (30 × 65,535 statuses), walked | \(format(r.hostileNanoseconds / 1000, 1)) | \(format(r.statusesPerHostileCompound)) | - |"
    )
    print("| same compound, expanded as the old parser did | \(format(r.hostileExpandedNanoseconds / 1000, 1)) | 1,966,050 | - |")
    print(
        "| honest feedback (20 packets, 1 lost) | \(format(r.honestNanoseconds / 1000, 2)) | 20 | \(r.honestAllocations.map { format($0, 2) } ?? "-") |"
    )
    print("| honest feedback, walk only (parsed beforehand) | - | 20 | \(r.walkAllocations.map { format($0, 2) } ?? "-") |")
}

if iceTCPPackets > 0 {
    do {
        let r = try ICETCPBench(packets: iceTCPPackets).run()
        print("")
        print("ICE-TCP echo, 1200-byte frames in windows of 32, \(r.packets) packets, worker thread + client thread")
        print("")
        print("| µs per packet (both ways, wall) | allocations per packet | frames in / out | send-buffer drops |")
        print("|---:|---:|---:|---:|")
        print(
            "| \(format(r.nanosecondsPerPacket / 1000, 2)) | \(r.allocationsPerPacket.map { format($0, 3) } ?? "-") | \(r.counters.framesReceived) / \(r.counters.framesSent) | \(r.counters.sendBufferDrops) |"
        )
    } catch {
        print("ICE-TCP echo failed: \(error)")
    }
}

if gsoFrames > 0 {
    print("")
    print("UDP GSO send, \(gsoFrames) frames of 8 x 1100-byte datagrams to 40 loopback subscribers, one flush per frame")
    print("")
    print("| GSO | packets | received | sendmmsg calls per packet | GSO messages | ns per packet (wall, send + receive) |")
    print("|---|---:|---:|---:|---:|---:|")
    for gso in gsoModes {
        do {
            let r = try GSOBench(frames: gsoFrames).run(gso: gso)
            print(
                "| \(gso ? "on" : "off") | \(r.packets) | \(r.received) | \(format(Double(r.sendCalls) / Double(r.packets), 4)) | \(r.gsoMessages) | \(format(r.seconds * 1e9 / Double(r.packets), 0)) |"
            )
        } catch {
            print("UDP GSO bench failed: \(error)")
        }
    }
}

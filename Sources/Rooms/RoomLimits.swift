import SDP

/// What one client may make the rooms layer hold (docs/SECURITY.md has the
/// defaults' reasons and what an over-limit client gets). Every count a
/// client controls is bounded here, before any state changes: a refused
/// request leaves no participant, track, subscription or transport behind.
package struct RoomLimits: Equatable, Sendable {
    /// Bytes of one SDP from a client (offer or answer): refused before it
    /// is parsed (`tooLarge`, HTTP 413).
    package var sdpBytes = 128 * 1024
    /// Bytes of one relayed data channel message, envelope included;
    /// larger ones are refused (`tooLarge`) and the session kept. SCTP
    /// itself stops at 64 KiB (`a=max-message-size`).
    package var dataMessageBytes = 16 * 1024
    /// Data channel messages one participant may send: a token bucket of
    /// this many per second, bursting to `dataMessageBurst`.
    package var dataMessagesPerSecond = 20
    package var dataMessageBurst = 40
    /// m-sections in one publish (WHIP, `publish`) or playback (WHEP)
    /// offer; the parser stops at the first one over (`tooManyTracks`).
    package var sectionsPerOffer = 16
    /// Tracks one participant publishes at once (`tooManyTracks`).
    package var tracksPerParticipant = 8
    /// Members of one SFU room (`roomFull`); mesh rooms keep their own,
    /// smaller `meshLimit`.
    package var participantsPerRoom = 100
    /// Rooms on this server (`serverFull`, HTTP 503); call rooms are not
    /// counted (each holds two participants who left a counted room).
    package var rooms = 1000
    /// Tracks one participant receives at once (`tooManySubscriptions`).
    package var subscriptionsPerParticipant = 128

    package init() {}

    /// A client's SDP parsed under these limits, or why it is refused. Pure
    /// and lock-free: the shell calls it before it takes the rooms lock, so
    /// a large offer costs its own connection's time, not everyone's.
    /// `offer`: an offer (its m-sections are bounded); otherwise an answer
    /// to our own offer, whose sections the subscriber builder checks.
    package func parse(_ sdp: String, offer: Bool) -> Result<SessionDescription, RoomError> {
        guard sdp.utf8.count <= sdpBytes else {
            return .failure(RoomError(.tooLarge, "the SDP is larger than \(sdpBytes) bytes"))
        }
        do throws(SDPParseError) {
            return .success(try SessionDescription.parse(sdp, maxMediaSections: offer ? sectionsPerOffer : .max))
        } catch .tooManyMediaSections {
            return .failure(RoomError(.tooManyTracks, "the offer has more than \(sectionsPerOffer) m-sections"))
        } catch .tooLarge {
            // The parser's own ceiling (`SessionDescription.maxBytes`).
            return .failure(RoomError(.tooLarge, "the SDP is larger than \(SessionDescription.maxBytes) bytes"))
        } catch {
            return .failure(RoomError(.negotiationFailed, "malformed SDP: \(error)"))
        }
    }
}

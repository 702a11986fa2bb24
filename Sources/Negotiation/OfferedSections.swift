import SDP
import Wire

/// What publish (WHIP, the publisher transport) and playback (WHEP) offers
/// share: walking the m-sections with their mids, and the checks every
/// section passes before its codecs are read.
enum OfferedSections {
    /// The outcome of the common checks on one m-section.
    enum Screened {
        /// Audio or video over RTP, in the BUNDLE group: read its codecs.
        case rtp(MediaKind)
        case rejected(PublishOffer.RejectedSection)
    }

    /// `analyse` applied to every m-section of `offer`, in order, with its
    /// mid (RemoteTransportParameters already required one per section).
    static func map<Section>(
        _ offer: SessionDescription, _ analyse: (MediaDescription, MID) -> Section
    )
        throws(NegotiationError) -> [Section]
    {
        var sections: [Section] = []
        for m in offer.media {
            guard let mid = m.mid else { throw .missingMID(index: sections.count) }
            sections.append(analyse(m, mid))
        }
        return sections
    }

    /// Rejected by the offerer (port 0 without `a=bundle-only`), not RTP
    /// audio or video (data channels and the like), or outside the BUNDLE
    /// group (we run exactly one transport): answered with port 0 (RFC 8829
    /// section 5.3.1). A bundle-only section (port 0 and `a=bundle-only`,
    /// what Firefox sends for every section after the first under
    /// `max-bundle`) is accepted when its mid is in the BUNDLE group (RFC
    /// 8843 section 7.3.2: it cannot be moved out, only kept or rejected);
    /// it shares the tagged section's transport, so its missing transport
    /// attributes (RFC 8843 section 7.1.3) do not matter.
    static func screen(_ m: MediaDescription, mid: MID, bundle: [MID]) -> Screened {
        guard !m.isRejected else { return .rejected(rejection(m, mid: mid, .rejectedByOfferer)) }
        guard let kind = MediaKind(rawValue: m.media), m.proto.contains("RTP") else {
            return .rejected(rejection(m, mid: mid, .unsupportedMedia))
        }
        guard bundle.contains(mid) else { return .rejected(rejection(m, mid: mid, .notBundled)) }
        return .rtp(kind)
    }

    static func rejection(_ m: MediaDescription, mid: MID, _ reason: PublishOffer.RejectionReason) -> PublishOffer.RejectedSection
    {
        PublishOffer.RejectedSection(mid: mid, media: m.media, proto: m.proto, formats: m.formats, reason: reason)
    }
}

/// One entry of the join response's `iceServers` (docs/PROTOCOL.md), in
/// the shape of WebRTC's `RTCIceServer` so a client passes the list to
/// `RTCPeerConnection` unchanged: the built-in TURN server's URLs (RFC
/// 7065) with short-lived credentials for this participant.
package struct ICEServer: Equatable, Sendable, Codable {
    package var urls: [String]
    package var username: String
    package var credential: String

    package init(urls: [String], username: String, credential: String) {
        self.urls = urls
        self.username = username
        self.credential = credential
    }
}

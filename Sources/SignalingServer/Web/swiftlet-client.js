// The room protocol of docs/PROTOCOL.md over one WebSocket, with the two
// PeerConnections of an SFU participant (publisher: we offer; subscriber:
// the server offers). Standard WebRTC only, no framework. Events (a
// CustomEvent's `detail` is the server message unless said otherwise):
// state, joined, participants, tracks, own-tracks, local-muted,
// active-speakers, stream-state, call-ringing, incoming-call, call-started,
// call-declined, call-ended, going-away, server-error.

// Three simulcast layers, low to high (rids q, h, f).
export const SIMULCAST = [
  { rid: 'q', scaleResolutionDownBy: 4, maxBitrate: 150000 },
  { rid: 'h', scaleResolutionDownBy: 2, maxBitrate: 500000 },
  { rid: 'f', maxBitrate: 1500000 },
];

// Preference menu value -> set-preference fields.
export const PREFERENCES = { auto: {}, low: { maxLayer: 0 }, medium: { maxLayer: 1 }, high: { maxLayer: 2 } };

// A token minted by the server in --dev mode; null when the server is not
// in dev mode (the route is 404 there).
export async function devToken(room, identity) {
  const query = new URLSearchParams({ room, identity });
  const response = await fetch(`/dev/token?${query}`, { cache: 'no-store' });
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`dev token: ${response.status} ${await response.text()}`);
  return (await response.json()).token;
}

// Whether the server mints dev tokens: GET /client-config answers
// {"devTokens": true|false} in both modes, so loading a page logs no
// failed request in the console.
export async function isDevMode() {
  try {
    const response = await fetch('/client-config', { cache: 'no-store' });
    return response.ok && (await response.json()).devTokens === true;
  } catch {
    return false;
  }
}

// The name chosen on the join form, kept across reloads (localStorage;
// null when none was kept or storage is unavailable).
const NAME_KEY = 'swiftlet.name';
export function rememberedName() {
  try {
    return localStorage.getItem(NAME_KEY);
  } catch {
    return null;
  }
}

export function rememberName(name) {
  try {
    if (name) localStorage.setItem(NAME_KEY, name);
  } catch {
    // Private mode or storage disabled: the name is simply not kept.
  }
}

// The claims of an access token (unverified: for display only).
export function tokenClaims(token) {
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const binary = atob(part + '='.repeat((4 - (part.length % 4)) % 4));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0))));
  } catch {
    return null;
  }
}

// mid -> {participantId, trackId, kind} from a subscriber offer's msid
// lines (the stream id is the publisher's participant id, the track id the
// server's track id).
export function subscriberSections(sdp) {
  const sections = new Map();
  let current = null;
  for (const line of sdp.split(/\r?\n/)) {
    if (line.startsWith('m=')) {
      current = { kind: line.slice(2).split(' ')[0], port: line.split(' ')[1], mid: null, participantId: null, trackId: null };
    } else if (current && line.startsWith('a=mid:')) {
      current.mid = line.slice(6).trim();
      sections.set(current.mid, current);
    } else if (current && line.startsWith('a=msid:')) {
      const [stream, track] = line.slice(7).trim().split(' ');
      current.participantId = stream;
      current.trackId = track || null;
    }
  }
  return sections;
}

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Moves `name`'s entries to the front of the transceiver's codec list, the
// rest kept in order (RTX among them): the server answers the offer's
// first codec it forwards. For H.264 the packetization-mode=1 constrained
// baseline entry (42e01f) goes first, the profile every browser decodes
// (docs/SIMULCAST.md, "Codecs").
export function preferVideoCodec(transceiver, name) {
  if (!RTCRtpSender.getCapabilities || !transceiver.setCodecPreferences) return false;
  const mime = `video/${name}`.toLowerCase();
  const codecs = RTCRtpSender.getCapabilities('video').codecs;
  const rank = (c) => {
    if (c.mimeType.toLowerCase() !== mime) return 3;
    const fmtp = c.sdpFmtpLine || '';
    if (mime !== 'video/h264') return 0;
    if (!/packetization-mode=1/.test(fmtp)) return 2;
    return /profile-level-id=42e0/i.test(fmtp) ? 0 : 1;
  };
  const ordered = codecs.map((c, i) => [rank(c), i, c]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((e) => e[2]);
  if (rank(ordered[0]) === 3) return false;
  transceiver.setCodecPreferences(ordered);
  return true;
}

export class SwiftletClient extends EventTarget {
  // url: the /rtc WebSocket; token: an access token; publishIn(room): whether
  // to publish camera and microphone in that room.
  // simulcast: false publishes one layer (see docs/WEB_CLIENT.md).
  // relay: null, or 'udp' / 'tcp' / 'tls' to use only the server's TURN
  // relay of that transport (iceTransportPolicy "relay"): the page's
  // ?relay= option, for testing a network where only that one works.
  // videoCodec: 'h264' (or 'vp8') puts that codec first in the video
  // offer (setCodecPreferences); null leaves the browser's order.
  constructor({ url, token, publishIn = () => true, simulcast = true, videoCodec = null, media = { audio: true, video: { width: 1280, height: 720 } }, relay = null }) {
    super();
    this.relay = relay;
    this.iceServers = [];
    this.simulcast = simulcast;
    this.videoCodec = videoCodec;
    this.url = url;
    this.token = token;
    this.publishIn = publishIn;
    this.mediaConstraints = media;
    this.state = 'idle';
    this.participantId = null;
    this.room = null;
    this.participants = new Map(); // id -> {id, identity, tracks: [{id, kind, layers, muted}]}
    this.identities = new Map(); // participant id -> identity, of everyone seen (names a call's peer)
    this.remoteTracks = new Map(); // mid -> {mid, participantId, trackId, kind, track, receiver}
    this.streamStates = new Map(); // trackId -> last stream-state message
    this.ownTracks = new Map(); // mid -> {id, kind, mid}: our published tracks, from publish-answer
    this.cameraMuted = false;
    this.microphoneMuted = false;
    this.activeSpeakers = [];
    this.localStream = null;
    this.publisher = null;
    this.subscriber = null;
    this.chatChannel = null;
    this.chat = []; // {from, text, own}: the room's chat as this page saw it (last 200)
    this.mediaRoom = null;
    this.offers = Promise.resolve();
    this.layerChanges = Promise.resolve();
    this.reconnects = 0;
    this.log = [];
  }

  emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  setState(state) {
    if (this.state === state) return;
    this.state = state;
    this.emit('state', state);
  }

  send(message) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  join() {
    this.leaving = false;
    this.setState('connecting');
    this.connect();
    clearInterval(this.keepAlive);
    // Our own liveness check: a blip that leaves the socket half open is
    // noticed within ~15 s and the reconnect starts.
    this.keepAlive = setInterval(() => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return;
      this.send({ type: 'ping' });
      if (performance.now() - this.lastHeard > 15000) this.ws.close();
    }, 5000);
  }

  connect() {
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.onopen = () => {
      this.lastHeard = performance.now();
      ws.send(JSON.stringify({ type: 'join', token: this.token }));
    };
    ws.onmessage = (event) => {
      this.lastHeard = performance.now();
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      this.log.push(message.type);
      if (this.log.length > 200) this.log.shift();
      this.handle(message).catch((error) => this.emit('client-error', String(error)));
    };
    ws.onclose = () => {
      if (ws !== this.ws || this.leaving || this.state === 'failed') return;
      this.reconnectLater();
    };
  }

  // Backoff 0.5, 1, 2, 4, 5, 5 ... s. Within the server's 20 s grace
  // period the same token resumes the same participant (and its
  // transports); after it the join is a fresh one and media restarts.
  reconnectLater() {
    this.setState('reconnecting');
    const delay = Math.min(5000, 500 * 2 ** Math.min(this.reconnects, 4));
    this.reconnects += 1;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      if (!this.leaving) this.connect();
    }, delay);
  }

  // Simulates a network blip (tests): drops the WebSocket without leave.
  dropConnection() {
    if (this.ws) this.ws.close();
  }

  // `leave`, then a normal close (1000): the server removes us at once
  // (it also takes a client's 1000 or 1001 close alone as a leave).
  leave() {
    this.leaving = true;
    clearInterval(this.keepAlive);
    clearTimeout(this.reconnectTimer);
    this.send({ type: 'leave' });
    if (this.ws) this.ws.close(1000, 'leave');
    this.resetMedia();
    if (this.localStream) this.localStream.getTracks().forEach((t) => t.stop());
    this.localStream = null;
    this.participants.clear();
    this.setState('left');
  }

  // A reloaded, closed or navigated-away tab leaves at once instead of
  // lingering as a frozen tile for the server's grace period: the first
  // of beforeunload (fired while the page is still whole) and pagehide
  // (the one mobile browsers and the back/forward cache fire) sends leave
  // and closes with 1000. Chromium by itself sends 1001 on a reload but
  // nothing at all on a navigation (docs/PROTOCOL.md). A page restored
  // from the back/forward cache calls `restored` (it has left by then).
  leaveWhenPageGoes(restored = () => location.reload()) {
    const gone = () => {
      if (!this.leaving && this.state !== 'idle') this.leave();
    };
    window.addEventListener('pagehide', gone);
    window.addEventListener('beforeunload', gone);
    window.addEventListener('pageshow', (e) => {
      if (e.persisted && this.leaving) restored();
    });
  }

  async handle(m) {
    switch (m.type) {
      case 'joined': {
        this.reconnects = 0;
        this.participantId = m.participantId;
        this.room = m.room;
        this.iceServers = m.iceServers || [];
        this.participants = new Map(m.participants.map((p) => [p.id, p]));
        for (const p of m.participants) this.identities.set(p.id, p.identity);
        const keep = m.resumed && this.mediaRoom === m.room && this.mediaHealthy();
        if (m.resumed && !keep && this.state !== 'joined') {
          // We took over a participant whose transports we no longer have
          // (a reloaded page, failed connections): leave it and join afresh.
          this.send({ type: 'leave' });
          this.send({ type: 'join', token: this.token });
          return;
        }
        if (!keep) await this.restartMedia(m.room);
        this.setState('joined');
        this.emit('joined', m);
        this.emit('participants');
        break;
      }
      case 'participant-joined':
        this.participants.set(m.participant.id, m.participant);
        this.identities.set(m.participant.id, m.participant.identity);
        this.emit('participants');
        break;
      case 'participant-left':
        this.participants.delete(m.participantId);
        this.emit('participants');
        break;
      case 'track-published': {
        const p = this.participant(m.participantId);
        p.tracks = p.tracks.filter((t) => t.id !== m.track.id).concat([m.track]);
        this.emit('participants');
        break;
      }
      case 'track-unpublished': {
        const p = this.participant(m.participantId);
        p.tracks = p.tracks.filter((t) => t.id !== m.trackId);
        this.emit('participants');
        break;
      }
      case 'track-muted': {
        const track = this.participant(m.participantId).tracks.find((t) => t.id === m.trackId);
        if (track) track.muted = m.muted;
        this.emit('participants');
        break;
      }
      case 'publish-answer': {
        const pc = this.publisher;
        if (pc && pc.signalingState === 'have-local-offer') {
          await pc.setRemoteDescription({ type: 'answer', sdp: m.sdp });
        }
        if (pc !== this.publisher) break;
        this.ownTracks = new Map((m.tracks || []).map((t) => [t.mid, t]));
        // New transports mean new track ids: a mute set before (or during
        // a media restart) is told to the server again for them.
        if (this.cameraMuted) this.sendMute('video', true);
        if (this.microphoneMuted) this.sendMute('audio', true);
        this.emit('own-tracks', [...this.ownTracks.values()]);
        break;
      }
      case 'subscriber-offer':
        this.offers = this.offers.then(() => this.answerOffer(m)).catch((e) => this.emit('client-error', String(e)));
        break;
      case 'active-speakers':
        this.activeSpeakers = m.speakers || [];
        this.emit('active-speakers', m);
        break;
      case 'publisher-layers':
        this.layerChanges = this.layerChanges.then(() => this.applyLayers(m)).catch((e) => this.emit('client-error', String(e)));
        break;
      case 'stream-state':
        this.streamStates.set(m.trackId, m);
        this.emit('stream-state', m);
        break;
      case 'call-started':
        // Both sides left their rooms for the private call room: new
        // transports there.
        // The peer's name (call-started's identity, else as seen in our
        // room or in incoming-call) labels its tile.
        this.room = m.room;
        this.participants = new Map();
        if (m.identity) this.identities.set(m.peer, m.identity);
        if (this.identities.has(m.peer)) this.participants.set(m.peer, { id: m.peer, identity: this.identities.get(m.peer), tracks: [] });
        await this.restartMedia(m.room);
        this.emit('call-started', m);
        this.emit('participants');
        break;
      case 'incoming-call':
        this.identities.set(m.from, m.identity);
        this.emit(m.type, m);
        break;
      case 'call-ringing':
        if (m.identity) this.identities.set(m.to, m.identity);
        this.emit(m.type, m);
        break;
      case 'call-declined':
      case 'call-ended':
        this.emit(m.type, m);
        break;
      case 'going-away':
        // The server drains: it closes this session at m.deadline (epoch
        // ms); the page may move to another server before then.
        this.goingAway = m;
        this.emit('going-away', m);
        break;
      case 'error':
        if (this.state === 'connecting' || this.state === 'reconnecting') {
          // A refused join (bad token, draining) will not get better by retrying.
          if (m.code === 'forbidden' || m.code === 'mode_mismatch' || m.code === 'identity_in_use') {
            this.setState('failed');
            if (this.ws) this.ws.close();
          }
        }
        this.emit('server-error', m);
        break;
      default:
        break;
    }
  }

  participant(id) {
    if (!this.participants.has(id)) this.participants.set(id, { id, identity: id, tracks: [] });
    return this.participants.get(id);
  }

  mediaHealthy() {
    const ok = (pc) => !pc || !['failed', 'closed'].includes(pc.connectionState);
    return ok(this.publisher) && ok(this.subscriber);
  }

  resetMedia() {
    for (const pc of [this.publisher, this.subscriber]) if (pc) pc.close();
    this.publisher = null;
    this.subscriber = null;
    this.mediaRoom = null;
    this.remoteTracks.clear();
    this.streamStates.clear();
    this.ownTracks = new Map();
    this.offers = Promise.resolve();
    this.emit('tracks');
  }

  async restartMedia(room) {
    this.resetMedia();
    this.mediaRoom = room;
    if (this.publishIn(room)) await this.publish();
  }

  // A transport failed while signalling is up: leave and join afresh (new
  // participant, new transports).
  recoverMedia() {
    if (this.recovering || this.leaving || this.state !== 'joined') return;
    this.recovering = true;
    this.send({ type: 'leave' });
    this.resetMedia();
    setTimeout(() => {
      this.recovering = false;
      this.send({ type: 'join', token: this.token });
    }, 500);
  }

  watch(pc) {
    pc.onconnectionstatechange = () => {
      this.emit('media-state', { publisher: this.publisher?.connectionState, subscriber: this.subscriber?.connectionState });
      if (pc.connectionState === 'failed' && (pc === this.publisher || pc === this.subscriber)) this.recoverMedia();
    };
  }

  async localMedia() {
    if (!this.localStream) {
      this.localStream = await navigator.mediaDevices.getUserMedia(this.mediaConstraints);
      this.emit('local-stream', this.localStream);
    }
    return this.localStream;
  }

  // The join response's TURN servers (docs/PROTOCOL.md), narrowed to one
  // transport with `relay`.
  rtcConfiguration() {
    if (!this.relay) return { iceServers: this.iceServers };
    const wanted = (u) =>
      this.relay === 'tls' ? u.startsWith('turns:') : u.startsWith('turn:') && u.includes(`transport=${this.relay}`);
    const iceServers = this.iceServers
      .map((s) => ({ ...s, urls: [].concat(s.urls).filter(wanted) }))
      .filter((s) => s.urls.length > 0);
    return { iceServers, iceTransportPolicy: 'relay' };
  }

  async publish() {
    const stream = await this.localMedia();
    const pc = new RTCPeerConnection(this.rtcConfiguration());
    this.publisher = pc;
    this.watch(pc);
    for (const track of stream.getVideoTracks()) {
      const init = { direction: 'sendonly', streams: [stream] };
      if (this.simulcast) init.sendEncodings = SIMULCAST;
      const transceiver = pc.addTransceiver(track, init);
      if (this.videoCodec) preferVideoCodec(transceiver, this.videoCodec);
    }
    for (const track of stream.getAudioTracks()) {
      pc.addTransceiver(track, { direction: 'sendonly', streams: [stream] });
    }
    // The room's chat: a reliable channel labelled "chat" on the publisher
    // connection; the server relays it to everyone's "chat" channel with
    // the sender's identity in front (docs/PROTOCOL.md "Data channels").
    const chat = pc.createDataChannel('chat');
    this.chatChannel = chat;
    chat.onmessage = ({ data }) => {
      if (typeof data !== 'string') return;
      const i = data.indexOf('\n');
      if (i < 0) return;
      this.addChat({ from: data.slice(0, i), text: data.slice(i + 1), own: false });
    };
    chat.onopen = () => this.emit('chat-open');
    await pc.setLocalDescription(await pc.createOffer());
    if (pc !== this.publisher) return;
    this.send({ type: 'publish', sdp: pc.localDescription.sdp });
  }

  addChat(entry) {
    this.chat.push(entry);
    if (this.chat.length > 200) this.chat.shift();
    this.emit('chat', entry);
  }

  // Opens another data channel on the publisher connection (no new offer:
  // DCEP opens it over the running association, RFC 8832). Messages the
  // server relays on it are kept in `dataMessages[label]` ([from, text]).
  openDataChannel(label, options) {
    if (!this.publisher) return false;
    const channel = this.publisher.createDataChannel(label, options);
    this.dataChannels = this.dataChannels || new Map();
    this.dataMessages = this.dataMessages || {};
    this.dataChannels.set(label, channel);
    this.dataMessages[label] = [];
    channel.onmessage = ({ data }) => {
      if (typeof data !== 'string') return;
      const i = data.indexOf('\n');
      const list = this.dataMessages[label];
      list.push([data.slice(0, i), data.slice(i + 1)]);
      if (list.length > 1000) list.shift();
    };
    return true;
  }

  // Sends on a channel from `openDataChannel`; false until it is open.
  sendData(label, text) {
    const channel = this.dataChannels && this.dataChannels.get(label);
    if (!channel || channel.readyState !== 'open') return false;
    channel.send(text);
    return true;
  }

  // Sends one chat line to the room; false while the channel is not open.
  // A line starting with "@" must be escaped ("@\n" first): the server
  // reads "@names\n" as a recipient list.
  sendChat(text) {
    const channel = this.chatChannel;
    if (!channel || channel.readyState !== 'open' || !text) return false;
    channel.send(text.startsWith('@') ? `@\n${text}` : text);
    this.addChat({ from: null, text, own: true });
    return true;
  }

  async answerOffer(m) {
    if (!this.subscriber) {
      const pc = new RTCPeerConnection(this.rtcConfiguration());
      this.subscriber = pc;
      this.watch(pc);
    }
    const pc = this.subscriber;
    await pc.setRemoteDescription({ type: 'offer', sdp: m.sdp });
    await pc.setLocalDescription(await pc.createAnswer());
    if (pc !== this.subscriber) return;
    this.send({ type: 'subscriber-answer', version: m.version, sdp: pc.localDescription.sdp });
    // Every receiving transceiver, labelled from the offer's msid lines.
    const sections = subscriberSections(m.sdp);
    this.remoteTracks.clear();
    for (const transceiver of pc.getTransceivers()) {
      const section = sections.get(transceiver.mid);
      if (!section || section.port === '0' || !section.participantId || transceiver.currentDirection === 'inactive') continue;
      const track = transceiver.receiver.track;
      this.remoteTracks.set(transceiver.mid, {
        mid: transceiver.mid,
        participantId: section.participantId,
        trackId: section.trackId,
        kind: track.kind,
        track,
        receiver: transceiver.receiver,
      });
    }
    this.emit('tracks');
  }

  // Dynacast: the server says which of our simulcast layers anyone
  // receives; switch the others off (matched by rid), keep the rest.
  async applyLayers(m) {
    if (!this.publisher) return;
    for (const sender of this.publisher.getSenders()) {
      const params = sender.getParameters();
      if (!params.encodings || !params.encodings.some((e) => e.rid)) continue;
      let changed = false;
      for (const encoding of params.encodings) {
        const layer = (m.layers || []).find((l) => l.rid === encoding.rid);
        if (layer && encoding.active !== layer.active) {
          encoding.active = layer.active;
          changed = true;
        }
      }
      if (changed) await sender.setParameters(params);
    }
  }

  // preference: a PREFERENCES name; 'auto' with maxWidth (device pixels,
  // the tile's rendered width) caps the layer by size instead.
  setPreference(trackId, preference, maxWidth = null) {
    const fields = { ...(PREFERENCES[preference] || {}) };
    if (preference === 'auto' && Number.isInteger(maxWidth) && maxWidth > 0) fields.maxWidth = maxWidth;
    this.send({ type: 'set-preference', trackId, ...fields });
  }

  // The server's ids of our published tracks of this kind ('video',
  // 'audio'), by the mid of the transceiver that sends them.
  ownTrackIds(kind) {
    if (!this.publisher) return [];
    const ids = [];
    for (const transceiver of this.publisher.getTransceivers()) {
      const track = transceiver.sender.track;
      const own = transceiver.mid !== null ? this.ownTracks.get(transceiver.mid) : null;
      if (track && track.kind === kind && own) ids.push(own.id);
    }
    return ids;
  }

  sendMute(kind, muted) {
    for (const trackId of this.ownTrackIds(kind)) this.send({ type: 'mute', trackId, muted });
  }

  // Mute disables the local track (black frames or silence) and tells the
  // server (`mute`), which tells the others (`track-muted`). Before the
  // publish-answer names our tracks, the mute is sent when it arrives.
  setCameraMuted(muted) {
    if (this.localStream) this.localStream.getVideoTracks().forEach((t) => (t.enabled = !muted));
    this.cameraMuted = muted;
    this.sendMute('video', muted);
    this.emit('local-muted', { video: this.cameraMuted, audio: this.microphoneMuted });
  }

  setMicrophoneMuted(muted) {
    if (this.localStream) this.localStream.getAudioTracks().forEach((t) => (t.enabled = !muted));
    this.microphoneMuted = muted;
    this.sendMute('audio', muted);
    this.emit('local-muted', { video: this.cameraMuted, audio: this.microphoneMuted });
  }

  call(to) {
    this.send({ type: 'call', to });
  }

  answerCall(callId) {
    this.send({ type: 'answer-call', callId });
  }

  declineCall(callId) {
    this.send({ type: 'decline-call', callId });
  }

  hangup(callId) {
    this.send({ type: 'hangup', callId });
  }
}

export { wait };

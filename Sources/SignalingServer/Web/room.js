// The room page: join a room by name (dev mode) or with a token, publish
// camera and microphone with simulcast, see everyone else in a grid.
import { SwiftletClient, devToken, isDevMode, rememberName, rememberedName, tokenClaims } from '/swiftlet-client.js';
import { TileGrid } from '/tiles.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const fragment = new URLSearchParams(location.hash.slice(1));
const socketURL = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/rtc`;
let client = null;
let grid = null;
let dev = false;
const streamStateLog = []; // stream-state messages with their arrival time (performance.now() ms)

function show(text) {
  $('message').textContent = text;
}

async function setUp() {
  dev = await isDevMode();
  for (const el of document.querySelectorAll('.dev')) el.hidden = !dev;
  document.querySelector('.token').hidden = dev;
  $('room').required = dev;
  $('name').required = dev;
  $('token').required = !dev;
  if (params.get('room')) $('room').value = params.get('room');
  // The name given in the URL, else the one chosen last time, else a new one.
  $('name').value = params.get('name') || rememberedName() || `guest-${Math.random().toString(36).slice(2, 6)}`;
  if (fragment.get('token')) $('token').value = fragment.get('token');
  if (!dev) show('This server does not mint tokens: paste an access token (swiftlet token --room R --identity I).');
  if (params.has('autojoin') || fragment.has('token')) join().catch((e) => show(String(e)));
}

async function join() {
  let token = $('token').value.trim();
  if (dev) {
    rememberName($('name').value.trim());
    token = await devToken($('room').value.trim(), $('name').value.trim());
  }
  if (!token) throw new Error('no token');
  const claims = tokenClaims(token);
  // ?publish=0: subscribe only (camera and microphone stay off).
  const publish = params.get('publish') !== '0';
  // ?codec=h264: publish video in H.264 (setCodecPreferences).
  const videoCodec = params.get('codec');
  client = new SwiftletClient({
    url: socketURL, simulcast: params.get('simulcast') !== '0', videoCodec, token, publishIn: () => publish,
    relay: params.get('relay'),
  });
  client.leaveWhenPageGoes();
  grid = new TileGrid($('grid'), client);
  client.addEventListener('state', (e) => {
    $('status').textContent = e.detail;
    $('status').dataset.state = e.detail;
  });
  client.addEventListener('joined', (e) => {
    $('where').textContent = `${e.detail.room} as ${claims ? claims.sub : ''} (${e.detail.participantId})`;
    show(e.detail.resumed ? 'reconnected' : '');
  });
  client.addEventListener('stream-state', (e) => {
    streamStateLog.push({ at: Math.round(performance.now()), ...e.detail });
    if (streamStateLog.length > 200) streamStateLog.shift();
  });
  client.addEventListener('server-error', (e) => show(`${e.detail.code}: ${e.detail.message}`));
  client.addEventListener('chat', (e) => addChatLine(e.detail));
  client.addEventListener('chat-open', () => {
    $('chat').hidden = false;
  });
  client.addEventListener('client-error', (e) => show(e.detail));
  $('join').hidden = true;
  $('controls').hidden = false;
  client.join();
}

$('join').addEventListener('submit', (e) => {
  e.preventDefault();
  join().catch((error) => show(String(error)));
});
$('camera').onclick = () => {
  client.setCameraMuted(!client.cameraMuted);
  $('camera').textContent = client.cameraMuted ? 'Unmute camera' : 'Mute camera';
};
$('microphone').onclick = () => {
  client.setMicrophoneMuted(!client.microphoneMuted);
  $('microphone').textContent = client.microphoneMuted ? 'Unmute microphone' : 'Mute microphone';
};
// The buttons' toggle, to a given state (test hook).
function setMuted(kind, muted) {
  if (!client) return false;
  const current = kind === 'camera' ? client.cameraMuted : client.microphoneMuted;
  if (current !== muted) $(kind).click();
  return true;
}
// One line of the chat log; text only (never HTML from the network).
function addChatLine({ from, text, own }) {
  const item = document.createElement('li');
  const who = document.createElement('b');
  who.textContent = own ? 'you' : from;
  item.append(who, document.createTextNode(` ${text}`));
  $('chat-log').append(item);
  while ($('chat-log').children.length > 200) $('chat-log').firstChild.remove();
  item.scrollIntoView({ block: 'nearest' });
}
$('chat-form').addEventListener('submit', (e) => {
  e.preventDefault();
  if (client && client.sendChat($('chat-text').value)) $('chat-text').value = '';
});
$('leave').onclick = () => {
  client.leave();
  grid.clear();
  $('chat').hidden = true;
  $('chat-log').replaceChildren();
  $('join').hidden = false;
  $('controls').hidden = true;
  show('left the room');
};

// The test hook (docs/WEB_CLIENT.md): what the page shows, as values.
window.swiftlet = {
  state: () => (client ? client.state : 'idle'),
  participantId: () => (client ? client.participantId : null),
  room: () => (client ? client.room : null),
  tiles: () => (grid ? grid.snapshot() : []),
  setPreference: (participantId, preference) => (grid ? grid.setPreference(participantId, preference) : false),
  muteCamera: (muted) => setMuted('camera', muted),
  muteMicrophone: (muted) => setMuted('microphone', muted),
  ownTracks: () => (client ? [...client.ownTracks.values()] : []),
  media: () => ({
    publisher: client && client.publisher ? client.publisher.connectionState : null,
    subscriber: client && client.subscriber ? client.subscriber.connectionState : null,
  }),
  dropConnection: () => client && client.dropConnection(),
  sendVideo: (on) => sendVideo(on),
  join: () => join(),
  leave: () => $('leave').click(),
  log: () => (client ? client.log.slice() : []),
  inbound: () => inboundVideo(),
  streamStates: () => streamStateLog.slice(),
  outbound: () => outboundVideo(),
  selectedPairs: () => selectedPairs(),
  sendChat: (text) => (client ? client.sendChat(text) : false),
  openDataChannel: (label, options) => (client ? client.openDataChannel(label, options) : false),
  sendData: (label, text) => (client ? client.sendData(label, text) : false),
  dataMessages: (label) => (client && client.dataMessages ? (client.dataMessages[label] || []).slice() : []),
  chat: () => (client ? client.chat.slice() : []),
};

// The local candidate of each connection's selected pair (type, and for a
// relay the transport to the TURN server): the TURN test checks that media
// went through the relay.
async function selectedPairs() {
  const out = {};
  for (const [name, pc] of [['publisher', client && client.publisher], ['subscriber', client && client.subscriber]]) {
    if (!pc) continue;
    const stats = await pc.getStats();
    stats.forEach((t) => {
      if (t.type !== 'transport' || !t.selectedCandidatePairId) return;
      const pair = stats.get(t.selectedCandidatePairId);
      const local = pair && stats.get(pair.localCandidateId);
      if (local) out[name] = { candidateType: local.candidateType, relayProtocol: local.relayProtocol || null, url: local.url || null };
    });
  }
  return out;
}

// Stops (false) or restarts (true) sending our camera without leaving or
// muting: the sender's track is replaced by none, so no frames go out, as
// when a publisher's network or camera dies (test hook: the others show
// "reconnecting…" on our tile).
async function sendVideo(on) {
  if (!client || !client.publisher || !client.localStream) return false;
  const camera = client.localStream.getVideoTracks()[0] || null;
  for (const transceiver of client.publisher.getTransceivers()) {
    if (transceiver.sender.track === (on ? null : camera) && transceiver.receiver.track.kind === 'video') {
      await transceiver.sender.replaceTrack(on ? camera : null);
    }
  }
  return true;
}

// Our published video per simulcast encoding (outbound-rtp by rid), and
// the publisher connection's available outgoing bitrate: what the
// simulcast test reports when a layer does not arrive.
async function outboundVideo() {
  const out = { encodings: [], availableOutgoingBitrate: null };
  if (!client || !client.publisher) return out;
  const active = new Map();
  for (const sender of client.publisher.getSenders()) {
    for (const e of sender.getParameters().encodings || []) if (e.rid) active.set(e.rid, e.active);
  }
  const report = await client.publisher.getStats();
  report.forEach((s) => {
    if (s.type === 'outbound-rtp' && s.kind === 'video') {
      const codec = s.codecId ? report.get(s.codecId) : null;
      out.encodings.push({
        rid: s.rid || null,
        codec: codec ? codec.mimeType : null,
        encoderImplementation: s.encoderImplementation || null,
        active: active.has(s.rid) ? active.get(s.rid) : null,
        frameWidth: s.frameWidth || 0,
        framesPerSecond: s.framesPerSecond || 0,
        bytesSent: s.bytesSent || 0,
        targetBitrate: s.targetBitrate || 0,
        qualityLimitationReason: s.qualityLimitationReason || null,
      });
    } else if (s.type === 'candidate-pair' && s.nominated && s.availableOutgoingBitrate !== undefined) {
      out.availableOutgoingBitrate = s.availableOutgoingBitrate;
    }
  });
  out.encodings.sort((a, b) => String(a.rid).localeCompare(String(b.rid)));
  return out;
}

// Fresh inbound-rtp video stats per remote participant (not the overlay's
// once-a-second sample): what the simulcast test polls every ~50 ms.
async function inboundVideo() {
  const out = {};
  if (!client) return out;
  for (const remote of client.remoteTracks.values()) {
    if (remote.kind !== 'video') continue;
    let s = null;
    const report = await remote.receiver.getStats();
    report.forEach((r) => {
      if (r.type === 'inbound-rtp' && r.kind === 'video') s = r;
    });
    if (!s) continue;
    const codec = s.codecId ? report.get(s.codecId) : null;
    const state = client.streamStates.get(remote.trackId);
    out[remote.participantId] = {
      trackId: remote.trackId,
      codec: codec ? `${codec.mimeType} ${codec.sdpFmtpLine || ''}`.trim() : null,
      decoderImplementation: s.decoderImplementation || null,
      frameWidth: s.frameWidth || 0,
      frameHeight: s.frameHeight || 0,
      framesDecoded: s.framesDecoded || 0,
      framesDropped: s.framesDropped || 0,
      keyFramesDecoded: s.keyFramesDecoded || 0,
      freezeCount: s.freezeCount || 0,
      totalFreezesDuration: s.totalFreezesDuration || 0,
      pauseCount: s.pauseCount || 0,
      nackCount: s.nackCount || 0,
      pliCount: s.pliCount || 0,
      packetsLost: s.packetsLost || 0,
      streamLayer: state && state.state === 'active' ? state.layer : null,
      streamState: state ? state.state : null,
      reason: state ? state.reason : null,
    };
  }
  return out;
}

setUp().catch((e) => show(String(e)));

// The one-to-one call page (the SkyWay model): go online, see who else is
// online (by name), call one by clicking their tile (or by name or
// participant id); the callee answers or declines; both see each other in
// a private room until one hangs up.
import { SwiftletClient, devToken, isDevMode, rememberName, rememberedName, tokenClaims } from '/swiftlet-client.js';
import { TileGrid } from '/tiles.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const fragment = new URLSearchParams(location.hash.slice(1));
const socketURL = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/rtc`;
// Everyone on the call page waits in this room (dev mode); calls reach a
// participant id anywhere on the server.
const LOBBY = 'call-lobby';
let client = null;
let grid = null;
let dev = false;
// idle | ringing-out | ringing-in | in-call | declined | ended
let call = { state: 'idle', id: null, peer: null, peerName: null, reason: null };
const SELF_CALL = "You can't call yourself: pick someone else.";

function show(text) {
  $('message').textContent = text;
}

function setCall(next) {
  const previous = call.state;
  call = { ...call, ...next };
  $('incoming').hidden = call.state !== 'ringing-in';
  $('in-call').hidden = !['in-call', 'ringing-out'].includes(call.state);
  $('online').hidden = !client || ['in-call', 'ringing-out', 'ringing-in'].includes(call.state);
  $('hangup').textContent = call.state === 'ringing-out' ? 'Cancel' : 'Hang up';
  // Ringing once the server has placed the call (call-ringing), calling
  // until then.
  const peer = call.peerName || call.peer;
  $('call-with').textContent =
    call.state === 'ringing-out' ? `${call.id ? 'Ringing' : 'Calling'} ${peer}…` : call.state === 'in-call' ? `In a call with ${peer}` : '';
  // Outside a call the grid is the lobby: one tile per participant online,
  // each a button that calls them. The call room's tiles go when it ends.
  $('grid').classList.toggle('call', call.state === 'in-call');
  $('grid').classList.toggle('lobby', call.state !== 'in-call');
  if (previous === 'in-call' && call.state !== 'in-call' && grid) grid.clear();
  showNobody();
}

function showNobody() {
  $('nobody').hidden = !client || client.state !== 'joined' || call.state === 'in-call' || client.participants.size > 0;
}

// The name of a participant we have seen (lobby, incoming call), or null.
function nameOf(id) {
  return (client && client.identities.get(id)) || null;
}

async function setUp() {
  dev = await isDevMode();
  for (const el of document.querySelectorAll('.dev')) el.hidden = !dev;
  document.querySelector('.token').hidden = dev;
  $('name').required = dev;
  $('token').required = !dev;
  // The name given in the URL, else the one chosen last time, else a new one.
  $('name').value = params.get('name') || rememberedName() || `guest-${Math.random().toString(36).slice(2, 6)}`;
  if (fragment.get('token')) $('token').value = fragment.get('token');
  if (!dev) show('This server does not mint tokens: paste an access token (swiftlet token --room R --identity I).');
  if (params.has('autojoin') || fragment.has('token')) goOnline().catch((e) => show(String(e)));
}

async function goOnline() {
  let token = $('token').value.trim();
  if (dev) {
    rememberName($('name').value.trim());
    token = await devToken(LOBBY, $('name').value.trim());
  }
  if (!token) throw new Error('no token');
  const claims = tokenClaims(token);
  // Publish only inside a call's private room.
  client = new SwiftletClient({ url: socketURL, simulcast: params.get('simulcast') !== '0', token, publishIn: (room) => room.startsWith('call/') });
  client.leaveWhenPageGoes();
  grid = new TileGrid($('grid'), client, { preferenceMenu: false, hint: 'click to call' });
  client.addEventListener('state', (e) => {
    $('status').textContent = e.detail;
    $('status').dataset.state = e.detail;
  });
  client.addEventListener('joined', (e) => {
    $('own-name').textContent = claims ? claims.sub : '';
    $('own-id').textContent = e.detail.participantId;
    setCall({});
  });
  client.addEventListener('participants', showNobody);
  client.addEventListener('call-ringing', (e) => {
    if (call.state === 'ringing-out' && call.peer === e.detail.to) {
      setCall({ id: e.detail.callId, peerName: e.detail.identity || call.peerName });
    } else if (call.cancelled === e.detail.to) {
      // Cancelled before the server named the call: cancel it now.
      client.hangup(e.detail.callId);
    }
    call.cancelled = null;
  });
  client.addEventListener('incoming-call', (e) => {
    $('caller').textContent = `Incoming call from ${e.detail.identity}`;
    setCall({ state: 'ringing-in', id: e.detail.callId, peer: e.detail.from, peerName: e.detail.identity });
  });
  client.addEventListener('call-started', (e) => {
    setCall({ state: 'in-call', id: e.detail.callId, peer: e.detail.peer, peerName: e.detail.identity || nameOf(e.detail.peer) || call.peerName });
    show('');
  });
  client.addEventListener('call-declined', () => {
    setCall({ state: 'declined', id: null, reason: 'declined' });
    show('The call was declined.');
  });
  client.addEventListener('call-ended', (e) => {
    // Only the call we know of (a stale end of an earlier call changes nothing).
    if (call.id && call.id !== e.detail.callId) return;
    setCall({ state: 'ended', id: null, reason: e.detail.reason });
    show(e.detail.reason === 'cancelled' ? 'The call was cancelled.' : `Call ended (${e.detail.reason}).`);
  });
  client.addEventListener('server-error', (e) => {
    if (call.state === 'ringing-out') setCall({ state: 'idle', id: null });
    show(e.detail.code === 'cannot_call_self' ? SELF_CALL : `${e.detail.code}: ${e.detail.message}`);
  });
  client.addEventListener('client-error', (e) => show(e.detail));
  $('join').hidden = true;
  client.join();
}

// Calls `to`: a participant id, or the name of someone in the lobby.
// Calling yourself is refused here (the server refuses it too, with
// cannot_call_self). False when nothing was sent.
function dial(to) {
  if (!client || !to) return false;
  const byName = [...client.participants.values()].find((p) => p.identity === to);
  const id = byName ? byName.id : to;
  if (id === client.participantId || (!byName && ownClaims() && to === ownClaims().sub)) {
    setCall({ state: 'idle', id: null, reason: 'self' });
    show(SELF_CALL);
    return false;
  }
  show('');
  setCall({ state: 'ringing-out', id: null, peer: id, peerName: nameOf(id), reason: null, cancelled: null });
  client.call(id);
  return true;
}

// Our own token's claims (the name we are online as).
function ownClaims() {
  return client ? tokenClaims(client.token) : null;
}

$('join').addEventListener('submit', (e) => {
  e.preventDefault();
  goOnline().catch((error) => show(String(error)));
});
$('dial').addEventListener('submit', (e) => {
  e.preventDefault();
  dial($('callee').value.trim());
});
// A lobby tile is a call button for its participant.
$('grid').addEventListener('click', (e) => {
  const tile = e.target.closest('.tile');
  if (!tile || tile.classList.contains('local') || !client || !['idle', 'declined', 'ended'].includes(call.state)) return;
  dial(tile.dataset.participantId);
});
$('copy').onclick = () => navigator.clipboard && navigator.clipboard.writeText($('own-id').textContent).catch(() => {});
$('answer').onclick = () => client.answerCall(call.id);
$('decline').onclick = () => {
  client.declineCall(call.id);
  setCall({ state: 'idle', id: null });
};
$('hangup').onclick = () => {
  // While ringing this is Cancel: hangup of the id call-ringing gave us
  // (the callee hears call-ended "cancelled"). Pressed before call-ringing
  // arrived, the hangup goes out when it does.
  const ringing = call.state === 'ringing-out';
  if (call.id) client.hangup(call.id);
  else if (ringing) call.cancelled = call.peer;
  setCall({ state: 'ended', reason: ringing ? 'cancelled' : 'hangup' });
};

// The test hook (docs/WEB_CLIENT.md).
window.swiftlet = {
  state: () => (client ? client.state : 'idle'),
  participantId: () => (client ? client.participantId : null),
  room: () => (client ? client.room : null),
  call: () => ({ ...call }),
  dial: (to) => dial(to),
  answer: () => $('answer').click(),
  decline: () => $('decline').click(),
  hangup: () => $('hangup').click(),
  cancel: () => $('hangup').click(),
  ringingText: () => $('call-with').textContent,
  callerText: () => $('caller').textContent,
  incomingVisible: () => !$('incoming').hidden,
  message: () => $('message').textContent,
  ownName: () => $('own-name').textContent,
  // The centre of the lobby tile named `name` (CSS pixels), for a real click.
  tileCentre: (name) => {
    const tile = [...document.querySelectorAll('#grid .tile')].find((t) => t.querySelector('.name').textContent === name);
    if (!tile) return null;
    const r = tile.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
  },
  tiles: () => (grid ? grid.snapshot() : []),
  media: () => ({
    publisher: client && client.publisher ? client.publisher.connectionState : null,
    subscriber: client && client.subscriber ? client.subscriber.connectionState : null,
  }),
  log: () => (client ? client.log.slice() : []),
};

setUp().catch((e) => show(String(e)));

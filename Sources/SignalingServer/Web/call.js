// The one-to-one call page (the SkyWay model): go online, show your
// participant id, call another id; the callee answers or declines; both
// see each other in a private room until one hangs up.
import { SwiftletClient, devToken, isDevMode } from '/swiftlet-client.js';
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
let call = { state: 'idle', id: null, peer: null, reason: null };

function show(text) {
  $('message').textContent = text;
}

function setCall(next) {
  call = { ...call, ...next };
  $('incoming').hidden = call.state !== 'ringing-in';
  $('in-call').hidden = !['in-call', 'ringing-out'].includes(call.state);
  $('online').hidden = !client || ['in-call', 'ringing-out', 'ringing-in'].includes(call.state);
  $('hangup').textContent = call.state === 'ringing-out' ? 'Cancel' : 'Hang up';
  // Ringing once the server has placed the call (call-ringing), calling
  // until then.
  $('call-with').textContent =
    call.state === 'ringing-out' ? `${call.id ? 'Ringing' : 'Calling'} ${call.peer}…` : call.state === 'in-call' ? `In a call with ${call.peerName || call.peer}` : '';
  if (call.state !== 'in-call' && grid) grid.clear();
}

async function setUp() {
  dev = await isDevMode();
  for (const el of document.querySelectorAll('.dev')) el.hidden = !dev;
  document.querySelector('.token').hidden = dev;
  $('name').required = dev;
  $('token').required = !dev;
  $('name').value = params.get('name') || `guest-${Math.random().toString(36).slice(2, 6)}`;
  if (fragment.get('token')) $('token').value = fragment.get('token');
  if (!dev) show('This server does not mint tokens: paste an access token (swiftlet token --room R --identity I).');
  if (params.has('autojoin') || fragment.has('token')) goOnline().catch((e) => show(String(e)));
}

async function goOnline() {
  let token = $('token').value.trim();
  if (dev) token = await devToken(LOBBY, $('name').value.trim());
  if (!token) throw new Error('no token');
  // Publish only inside a call's private room.
  client = new SwiftletClient({ url: socketURL, simulcast: params.get('simulcast') !== '0', token, publishIn: (room) => room.startsWith('call/') });
  grid = new TileGrid($('grid'), client, { preferenceMenu: false });
  client.addEventListener('state', (e) => {
    $('status').textContent = e.detail;
    $('status').dataset.state = e.detail;
  });
  client.addEventListener('joined', (e) => {
    $('own-id').textContent = e.detail.participantId;
    setCall({});
  });
  client.addEventListener('call-ringing', (e) => {
    if (call.state === 'ringing-out' && call.peer === e.detail.to) {
      setCall({ id: e.detail.callId });
    } else if (call.cancelled === e.detail.to) {
      // Cancelled before the server named the call: cancel it now.
      client.hangup(e.detail.callId);
    }
    call.cancelled = null;
  });
  client.addEventListener('incoming-call', (e) => {
    $('caller').textContent = `Incoming call from ${e.detail.identity} (${e.detail.from})`;
    setCall({ state: 'ringing-in', id: e.detail.callId, peer: e.detail.from, peerName: e.detail.identity });
  });
  client.addEventListener('call-started', (e) => {
    const known = client.participants.get(e.detail.peer);
    setCall({ state: 'in-call', id: e.detail.callId, peer: e.detail.peer, peerName: known ? known.identity : call.peerName });
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
    show(`${e.detail.code}: ${e.detail.message}`);
  });
  client.addEventListener('client-error', (e) => show(e.detail));
  $('join').hidden = true;
  client.join();
}

function dial(to) {
  setCall({ state: 'ringing-out', id: null, peer: to, peerName: null, reason: null, cancelled: null });
  client.call(to);
}

$('join').addEventListener('submit', (e) => {
  e.preventDefault();
  goOnline().catch((error) => show(String(error)));
});
$('dial').addEventListener('submit', (e) => {
  e.preventDefault();
  dial($('callee').value.trim());
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
  incomingVisible: () => !$('incoming').hidden,
  tiles: () => (grid ? grid.snapshot() : []),
  media: () => ({
    publisher: client && client.publisher ? client.publisher.connectionState : null,
    subscriber: client && client.subscriber ? client.subscriber.connectionState : null,
  }),
  log: () => (client ? client.log.slice() : []),
};

setUp().catch((e) => show(String(e)));

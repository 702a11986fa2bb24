// The connectivity check page (/check): with the TURN credentials of
// /ice-servers (a token from the fragment, or a dev token), one
// RTCPeerConnection per way in, with iceTransportPolicy "relay", each
// reporting whether it got through:
//   UDP   a relay allocated over UDP to the TURN port
//   TCP   a relay allocated over TCP to the TURN port
//   TLS   a relay allocated over TLS (what passes firewalls that allow only 443)
// A relay candidate is gathered only after the server accepted the
// Allocate, so a candidate means that transport works end to end. The
// media ports themselves are what a room join uses first; this page does
// not join.
import { devToken } from '/swiftlet-client.js';

const $ = (id) => document.getElementById(id);
const fragment = new URLSearchParams(location.hash.slice(1));
const results = new Map();
const CHECKS = [
  ['udp', 'UDP', (u) => u.startsWith('turn:') && u.includes('transport=udp')],
  ['tcp', 'TCP', (u) => u.startsWith('turn:') && u.includes('transport=tcp')],
  ['tls', 'TLS', (u) => u.startsWith('turns:')],
];

function show(id, label, text, ok) {
  results.set(id, { label, result: text, ok });
  let row = $(`check-${id}`);
  if (!row) {
    row = document.createElement('tr');
    row.id = `check-${id}`;
    $('results').append(row);
  }
  row.innerHTML = '';
  for (const value of [label, ok === null ? '…' : ok ? 'works' : 'blocked', text]) {
    const cell = document.createElement('td');
    cell.textContent = value;
    row.append(cell);
  }
}

// Gathers candidates through `server` only and resolves with the first
// relay candidate's address (null after `seconds` or when gathering ends
// without one).
async function probe(server, seconds) {
  const pc = new RTCPeerConnection({ iceServers: [server], iceTransportPolicy: 'relay' });
  pc.createDataChannel('check');
  try {
    const found = new Promise((resolve) => {
      pc.addEventListener('icecandidate', (e) => {
        if (e.candidate && e.candidate.type === 'relay') resolve(e.candidate);
        if (!e.candidate) resolve(null);
      });
      setTimeout(() => resolve(null), seconds * 1000);
    });
    await pc.setLocalDescription(await pc.createOffer());
    const candidate = await found;
    return candidate ? `${candidate.address}:${candidate.port}` : null;
  } finally {
    pc.close();
  }
}

async function check() {
  $('message').textContent = '';
  let token = $('token').value.trim() || fragment.get('token');
  const config = await (await fetch('/client-config')).json();
  if (!token && config.devTokens) token = await devToken('check', `check-${Math.random().toString(36).slice(2, 8)}`);
  if (!token) {
    document.querySelector('.token').hidden = false;
    $('message').textContent = 'Paste an access token (swiftlet token --room R --identity I).';
    return;
  }
  const answer = await fetch('/ice-servers', { headers: { Authorization: `Bearer ${token}` } });
  if (!answer.ok) throw new Error(`/ice-servers: ${answer.status} ${await answer.text()}`);
  const servers = (await answer.json()).iceServers;
  if (servers.length === 0) {
    $('message').textContent = 'This server runs no TURN server (swiftlet serve --turn): nothing to check here.';
    return;
  }
  await Promise.all(
    CHECKS.map(async ([id, label, wanted]) => {
      const urls = [].concat(servers[0].urls).filter(wanted);
      if (urls.length === 0) return show(id, label, 'not offered by this server', false);
      show(id, label, urls[0], null);
      const got = await probe({ ...servers[0], urls }, 8);
      show(id, label, got ? `${urls[0]} (relay ${got})` : `${urls[0]}: no relay`, Boolean(got));
    }),
  );
}

$('check').addEventListener('submit', (e) => {
  e.preventDefault();
  check().catch((error) => ($('message').textContent = String(error)));
});
check().catch((error) => ($('message').textContent = String(error)));

// Test hook: every check's result so far.
window.swiftletCheck = { results: () => Object.fromEntries(results) };

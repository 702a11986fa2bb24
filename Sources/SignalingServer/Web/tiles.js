// A grid of video tiles, one per remote participant (plus one for
// ourselves), each with a name, a stats overlay (resolution, frame rate,
// bitrate, loss, RTT, layer received), a muted badge and optionally a
// layer preference menu. Reads everything from a SwiftletClient; tiles()
// is what the test hook returns, the same numbers the overlay shows.

const LAYER_NAMES = ['low', 'medium', 'high'];
// A tile's size settles this long after its last resize before 'auto'
// tells the server its width.
const RESIZE_DEBOUNCE_MS = 300;
// A received video that decoded frames before and has decoded none for
// STALL_MS, while neither muted nor paused by the server (stream-state),
// shows "reconnecting…" instead of a frozen picture. Checked every
// STALL_CHECK_MS from one getStats() of the subscriber connection, so it
// shows 1 to 1.5 s after the last frame and clears within 0.5 s of the
// next.
const STALL_MS = 1000;
const STALL_CHECK_MS = 500;

// The badge text for muted tracks ('' when nothing is muted).
function badgeText(videoMuted, audioMuted) {
  return [videoMuted ? 'camera muted' : null, audioMuted ? 'mic muted' : null].filter(Boolean).join(' · ');
}

export class TileGrid {
  // hint: a short text on every remote tile (the call page's "click to call").
  constructor(container, client, { preferenceMenu = true, hint = null } = {}) {
    this.container = container;
    this.client = client;
    this.preferenceMenu = preferenceMenu;
    this.hint = hint;
    this.tiles = new Map(); // participantId -> tile
    this.local = null;
    for (const type of ['participants', 'tracks', 'joined', 'call-started']) {
      client.addEventListener(type, () => this.sync());
    }
    client.addEventListener('active-speakers', () => this.highlight());
    client.addEventListener('local-stream', (e) => this.showLocal(e.detail));
    client.addEventListener('local-muted', () => this.showLocalMuted());
    // 'auto' preference: each remote tile's rendered width, in device
    // pixels, becomes the maxWidth of its set-preference.
    this.resizes = typeof ResizeObserver === 'function' ? new ResizeObserver((entries) => this.resized(entries)) : null;
    this.timer = setInterval(() => this.updateStats(), 1000);
    this.stallTimer = setInterval(() => this.checkStalls().catch(() => {}), STALL_CHECK_MS);
  }

  showLocal(stream) {
    if (!this.local) {
      this.local = this.makeTile('local', 'you', false);
      this.local.element.classList.add('local');
      this.container.prepend(this.local.element);
    }
    this.local.video.srcObject = stream;
    this.local.video.play().catch(() => {});
    this.showLocalMuted();
  }

  showLocalMuted() {
    if (this.local) this.setBadge(this.local, !!this.client.cameraMuted, !!this.client.microphoneMuted);
  }

  setBadge(tile, videoMuted, audioMuted) {
    tile.videoMuted = videoMuted;
    tile.audioMuted = audioMuted;
    tile.badge.textContent = badgeText(videoMuted, audioMuted);
    tile.badge.hidden = !videoMuted && !audioMuted;
    tile.element.classList.toggle('video-muted', videoMuted);
  }

  makeTile(participantId, name, withMenu) {
    const element = document.createElement('div');
    element.className = 'tile';
    element.dataset.participantId = participantId;
    const video = document.createElement('video');
    video.autoplay = true;
    video.playsInline = true;
    video.muted = true;
    const audio = document.createElement('audio');
    audio.autoplay = true;
    const label = document.createElement('div');
    label.className = 'name';
    label.textContent = name;
    const overlay = document.createElement('pre');
    overlay.className = 'stats';
    const badge = document.createElement('div');
    badge.className = 'badge';
    badge.hidden = true;
    const stalled = document.createElement('div');
    stalled.className = 'reconnecting';
    stalled.textContent = 'reconnecting…';
    stalled.hidden = true;
    element.append(video, audio, label, overlay, badge, stalled);
    const tile = {
      participantId, element, video, audio, label, overlay, badge, stalled, preference: 'auto', stats: {}, previous: null, maxWidth: 0,
      videoMuted: false, audioMuted: false, renderedWidth: 0, sentWidth: null, sentFor: null, resizeTimer: null,
      reconnecting: false, decodedFor: null, lastDecoded: 0, progressAt: 0,
    };
    if (withMenu) {
      const menu = document.createElement('select');
      menu.className = 'preference';
      menu.title = 'layer preference';
      for (const value of ['auto', 'low', 'medium', 'high']) menu.add(new Option(value, value));
      menu.onchange = () => this.setPreference(participantId, menu.value);
      element.append(menu);
      tile.menu = menu;
    }
    return tile;
  }

  tileFor(participantId) {
    let tile = this.tiles.get(participantId);
    if (!tile) {
      const p = this.client.participants.get(participantId);
      tile = this.makeTile(participantId, p ? p.identity : participantId, this.preferenceMenu);
      if (this.hint) {
        const hint = document.createElement('div');
        hint.className = 'call-hint';
        hint.textContent = this.hint;
        tile.element.append(hint);
      }
      this.tiles.set(participantId, tile);
      this.container.append(tile.element);
      if (this.resizes) this.resizes.observe(tile.video);
    }
    return tile;
  }

  // Tiles follow the participants and the received tracks.
  sync() {
    const present = new Set([...this.client.participants.keys()]);
    for (const t of this.client.remoteTracks.values()) present.add(t.participantId);
    for (const [id, tile] of this.tiles) {
      if (!present.has(id)) {
        if (this.resizes) this.resizes.unobserve(tile.video);
        clearTimeout(tile.resizeTimer);
        tile.element.remove();
        this.tiles.delete(id);
      }
    }
    for (const id of present) {
      const tile = this.tileFor(id);
      const p = this.client.participants.get(id);
      if (p) {
        tile.label.textContent = p.identity;
        const muted = (kind) => p.tracks.some((t) => t.kind === kind && t.muted);
        this.setBadge(tile, muted('video'), muted('audio'));
      }
      const tracks = [...this.client.remoteTracks.values()].filter((t) => t.participantId === id);
      const video = tracks.find((t) => t.kind === 'video');
      const audio = tracks.find((t) => t.kind === 'audio');
      tile.videoTrack = video || null;
      this.attach(tile.video, video);
      this.attach(tile.audio, audio);
      this.sendAutoWidth(tile);
    }
    this.highlight();
  }

  attach(element, remote) {
    const current = element.srcObject ? element.srcObject.getTracks()[0] : null;
    if (remote && current === remote.track) return;
    element.srcObject = remote ? new MediaStream([remote.track]) : null;
    // Autoplay with sound may need a user gesture: retry on the next click.
    if (remote) element.play().catch(() => document.addEventListener('click', () => element.play().catch(() => {}), { once: true }));
  }

  highlight() {
    const first = this.client.activeSpeakers[0];
    for (const [id, tile] of this.tiles) tile.element.classList.toggle('speaking', !!first && first.participantId === id);
    if (this.local) this.local.element.classList.toggle('speaking', !!first && first.participantId === this.client.participantId);
  }

  setPreference(participantId, preference) {
    const tile = this.tiles.get(participantId);
    if (!tile) return false;
    tile.preference = preference;
    if (tile.menu) tile.menu.value = preference;
    const remote = tile.videoTrack;
    if (!remote || !remote.trackId) return false;
    if (preference === 'auto') {
      tile.sentFor = null;
      this.sendAutoWidth(tile);
      // No width yet (not laid out): auto without a cap until there is one.
      if (tile.sentFor === null) this.client.setPreference(remote.trackId, 'auto');
    } else {
      tile.sentFor = null;
      this.client.setPreference(remote.trackId, preference);
    }
    return true;
  }

  resized(entries) {
    for (const entry of entries) {
      const tile = [...this.tiles.values()].find((t) => t.video === entry.target);
      if (!tile) continue;
      // Device pixels: exact where the browser reports them, else CSS
      // pixels times the ratio.
      const box = entry.devicePixelContentBoxSize && entry.devicePixelContentBoxSize[0];
      tile.renderedWidth = box ? Math.round(box.inlineSize) : Math.round(entry.contentRect.width * (window.devicePixelRatio || 1));
      clearTimeout(tile.resizeTimer);
      tile.resizeTimer = setTimeout(() => this.sendAutoWidth(tile), RESIZE_DEBOUNCE_MS);
    }
  }

  // 'auto': tells the server this tile's rendered width (set-preference
  // maxWidth) when it has a video track and a width and either changed
  // since the last one sent. A zero width (hidden, not laid out) sends
  // nothing: maxWidth 0 would pause the track.
  sendAutoWidth(tile) {
    const remote = tile.videoTrack;
    if (tile.preference !== 'auto' || !remote || !remote.trackId || tile.renderedWidth <= 0) return;
    const key = `${remote.trackId}/${tile.renderedWidth}`;
    if (tile.sentFor === remote.receiver && tile.sentWidth === key) return;
    this.client.setPreference(remote.trackId, 'auto', tile.renderedWidth);
    tile.sentFor = remote.receiver;
    tile.sentWidth = key;
    tile.autoWidth = tile.renderedWidth;
  }

  setReconnecting(tile, reconnecting) {
    tile.reconnecting = reconnecting;
    tile.stalled.hidden = !reconnecting;
    tile.element.classList.toggle('stalled', reconnecting);
  }

  // framesDecoded of every received video, by its track, in one
  // getStats() of the subscriber connection.
  async checkStalls() {
    const pc = this.client.subscriber;
    if (!pc) return;
    const decoded = new Map();
    (await pc.getStats()).forEach((s) => {
      if (s.type === 'inbound-rtp' && s.kind === 'video' && s.trackIdentifier) decoded.set(s.trackIdentifier, s.framesDecoded || 0);
    });
    for (const tile of this.tiles.values()) {
      const remote = tile.videoTrack;
      if (!remote) this.setReconnecting(tile, false);
      else if (decoded.has(remote.track.id)) this.checkStalled(tile, remote, decoded.get(remote.track.id), this.client.streamStates.get(remote.trackId));
    }
  }

  // Whether this tile's video stopped: frames decoded before, none for
  // STALL_MS, and not because of a mute or a server pause (both count as
  // progress, so the state does not flash when they end).
  checkStalled(tile, remote, framesDecoded, state) {
    const now = performance.now();
    if (tile.decodedFor !== remote.receiver) {
      tile.decodedFor = remote.receiver;
      tile.lastDecoded = 0;
      tile.progressAt = now;
    }
    const paused = !!state && state.state === 'paused';
    if (framesDecoded > tile.lastDecoded || tile.videoMuted || paused) tile.progressAt = now;
    tile.lastDecoded = Math.max(tile.lastDecoded, framesDecoded);
    this.setReconnecting(tile, tile.lastDecoded > 0 && now - tile.progressAt >= STALL_MS);
  }

  trackInfo(participantId, trackId) {
    const p = this.client.participants.get(participantId);
    return p ? p.tracks.find((t) => t.id === trackId) : null;
  }

  async roundTripMs() {
    const pc = this.client.subscriber;
    if (!pc) return null;
    let rtt = null;
    (await pc.getStats()).forEach((s) => {
      if (s.type === 'candidate-pair' && s.nominated && s.state === 'succeeded' && s.currentRoundTripTime !== undefined) {
        rtt = Math.round(s.currentRoundTripTime * 1000);
      }
    });
    return rtt;
  }

  async updateStats() {
    const rttMs = await this.roundTripMs().catch(() => null);
    for (const tile of this.tiles.values()) {
      const remote = tile.videoTrack;
      if (!remote) {
        tile.stats = { rttMs };
        tile.overlay.textContent = 'no video';
        continue;
      }
      let inbound = null;
      try {
        (await remote.receiver.getStats()).forEach((s) => {
          if (s.type === 'inbound-rtp' && s.kind === 'video') inbound = s;
        });
      } catch {
        continue;
      }
      if (!inbound) continue;
      const previous = tile.previous;
      tile.previous = inbound;
      const seconds = previous ? (inbound.timestamp - previous.timestamp) / 1000 : 0;
      const bitrateKbps = seconds > 0 ? Math.round(((inbound.bytesReceived - previous.bytesReceived) * 8) / seconds / 1000) : 0;
      const lost = previous ? (inbound.packetsLost || 0) - (previous.packetsLost || 0) : 0;
      const received = previous ? inbound.packetsReceived - previous.packetsReceived : 0;
      const lossPercent = lost > 0 && lost + received > 0 ? Math.round((1000 * lost) / (lost + received)) / 10 : 0;
      const frameWidth = inbound.frameWidth || 0;
      tile.maxWidth = Math.max(tile.maxWidth, frameWidth);
      const state = this.client.streamStates.get(remote.trackId);
      const info = this.trackInfo(remote.participantId, remote.trackId);
      const layerCount = info && info.layers ? Math.max(1, info.layers.length) : 1;
      let layer;
      let layerSource;
      if (state) {
        layer = state.state === 'paused' ? null : state.layer;
        layerSource = 'stream-state';
      } else if (frameWidth > 0) {
        // Until the server sends stream-state: the layer whose width this
        // is, taking the widest frame seen so far as the top layer (each
        // layer halves the width).
        const below = Math.round(Math.log2(tile.maxWidth / frameWidth));
        layer = Math.max(0, Math.min(layerCount - 1, layerCount - 1 - below));
        layerSource = 'estimated';
      } else {
        layer = null;
        layerSource = 'none';
      }
      tile.stats = {
        frameWidth,
        frameHeight: inbound.frameHeight || 0,
        framesDecoded: inbound.framesDecoded || 0,
        framesPerSecond: Math.round(inbound.framesPerSecond || 0),
        bitrateKbps,
        lossPercent,
        rttMs,
        layer,
        layerSource,
        streamState: state ? state.state : null,
        reason: state ? state.reason : null,
      };
      const layerText = layer === null ? (state ? `paused (${state.reason})` : '-') : `${LAYER_NAMES[layer] || layer}${layerSource === 'estimated' ? ' (est.)' : ''}`;
      tile.overlay.textContent =
        `${frameWidth}x${tile.stats.frameHeight} ${tile.stats.framesPerSecond} fps\n` +
        `${bitrateKbps} kbps  loss ${lossPercent}%\n` +
        `rtt ${rttMs === null ? '-' : rttMs + ' ms'}  layer ${layerText}`;
    }
  }

  // The test hook's view of the grid: what each overlay shows.
  snapshot() {
    const first = this.client.activeSpeakers[0];
    return [...this.tiles.values()].map((tile) => {
      const p = this.client.participants.get(tile.participantId);
      return {
        participantId: tile.participantId,
        identity: p ? p.identity : tile.participantId,
        trackId: tile.videoTrack ? tile.videoTrack.trackId : null,
        preference: tile.preference,
        // The maxWidth that 'auto' last sent (device pixels), or null.
        autoMaxWidth: tile.preference === 'auto' && tile.sentFor ? tile.autoWidth : null,
        renderedWidth: tile.renderedWidth,
        videoMuted: tile.videoMuted,
        audioMuted: tile.audioMuted,
        badge: tile.badge.hidden ? '' : tile.badge.textContent,
        // "reconnecting…" shows: the video stopped (see STALL_MS).
        reconnecting: tile.reconnecting,
        speaking: !!first && first.participantId === tile.participantId,
        ...tile.stats,
      };
    });
  }

  clear() {
    for (const tile of this.tiles.values()) {
      if (this.resizes) this.resizes.unobserve(tile.video);
      clearTimeout(tile.resizeTimer);
      tile.element.remove();
    }
    this.tiles.clear();
    if (this.local) this.local.element.remove();
    this.local = null;
  }
}

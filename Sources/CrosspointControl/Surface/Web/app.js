/* Crosspoint control surface (served by `crosspoint serve`): plain ES2020, no dependencies.
 *
 * What it does: shows one Crosspoint node's matrix (rows = inputs, columns = outputs) with
 * input strips as row heads and output strips as column heads (gain, mute, live meter, links),
 * and lets a person change it by mouse, touch and keyboard.
 *
 * Sections, in order:
 *   1. util      number/dB formatting, DOM helpers, toast
 *   2. state     the server's node (truth) + local optimistic values while a change is on its way
 *   3. network   the token's cookie, fetch wrapper, change queue (<= 30 requests/s, one in flight, keys merged,
 *                the last value always lands), WebSocket with 1 s reconnect and re-watch
 *   4. header    node picker, connection status, master, ramp, channel counts, presets
 *   5. grid      virtual grid: only visible cells / strips exist; node messages patch them; sizes
 *                fitted to the window (fitLayout); output heads' labels and pickers in runs
 *   5b. devices  the devices panel: add, rename, remove the node's virtual devices (`devices`)
 *   5c. apps     the apps panel: the applications' streams, where each plays or records, moving them
 *   6. gestures  click / drag / wheel / double-click on cells and gain controls, inline editor
 *   7. meters    levels messages -> requestAnimationFrame, transforms only, peak hold, clip latch
 *   8. keyboard  arrow-key cursor over cells and strips, + - 0 Del m Enter n Esc
 *   9. boot
 * Test hooks are data-testid attributes (see index.html and the strip/cell builders) and
 * window.crosspointStats = {renderMs, ...}.
 */
'use strict';

/* ================================================================ 1. util */

const FLOOR_DB = -60;   // stepping below this goes to off
const START_DB = -40;   // the first step up from off
let MAX_DB = 20;        // the node's limit (linear 10): the table's top gain, once api/params answers
const STEP_DB = 0.5;
const DBL_MS = 300;     // double-click / double-tap window (a click acts at once; see tap())
const SEND_MS = 1000 / 30;

const $ = (id) => document.getElementById(id);

function toDb(g) { return g === 0 ? -Infinity : 20 * Math.log10(Math.abs(g)); }
function fromDb(db, sign) { return db === -Infinity ? 0 : (sign < 0 ? -1 : 1) * Math.pow(10, db / 20); }
function isUnity(g) { return Math.abs(g - 1) < 1e-5; }

/** Cell text: "0", "-6.0", "+3.5", "ø-6.0"; null when off. */
function fmtCell(g) {
  if (g === 0) return null;
  const db = toDb(g);
  let t;
  if (Math.abs(db) < 0.05) t = '0';
  else if (db <= -99.95) t = db.toFixed(0);
  else t = (db > 0 ? '+' : '') + db.toFixed(1);
  return (g < 0 ? 'ø' : '') + t;
}
/** Strip / master text: "0.0", "-6.0", "-inf", "ø-3.0". */
function fmtGain(g) {
  if (g === 0) return '-inf';
  const db = toDb(g);
  const t = Math.abs(db) < 0.05 ? '0.0' : (db > 0 ? '+' : '') + db.toFixed(1);
  return (g < 0 ? 'ø' : '') + t;
}
/** Words for screen readers and titles. */
function sayGain(g) {
  if (g === 0) return 'off';
  return (g < 0 ? 'polarity inverted, ' : '') + fmtGain(Math.abs(g)) + ' dB';
}
/** What the inline editor starts with: dB text, or the linear number when polarity is flipped. */
function editText(g) {
  if (g === 0) return '-inf';
  if (g < 0) return String(Math.round(g * 10000) / 10000);
  const db = toDb(g);
  return (Math.abs(db) < 0.05 ? '0' : db.toFixed(1)) + 'dB';
}
/** The gain `steps` half-dB steps from g: off -> START_DB, below FLOOR_DB -> off, sign kept. */
function stepGain(g, steps) {
  if (!steps) return g;
  let db;
  if (g === 0) {
    if (steps < 0) return 0;
    db = START_DB + (steps - 1) * STEP_DB;
  } else {
    db = Math.round(toDb(g) / STEP_DB) * STEP_DB + steps * STEP_DB;
  }
  if (db < FLOOR_DB - 1e-9) return 0;
  db = Math.min(db, MAX_DB);
  const v = fromDb(db, g < 0 ? -1 : 1);
  return Number(v.toPrecision(7));
}

function h(tag, props, ...kids) {
  const e = document.createElement(tag);
  if (props) for (const k in props) {
    if (k === 'class') e.className = props[k];
    else if (k === 'text') e.textContent = props[k];
    else e.setAttribute(k, props[k]);
  }
  for (const k of kids) e.append(k);
  return e;
}

let toastTimer = 0;
function toast(message) {
  const t = $('error');
  t.textContent = message;
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, 7000);
}
let noticeTimer = 0;
function notice(message) {
  const n = $('notice');
  n.textContent = message;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { n.textContent = ''; }, 2500);
}

/* ================================================================ 2. state */

const S = {
  locked: false,  // no token: every request answered 401
  nodes: [],              // [{id, name, description, inputs, outputs}]
  nodeId: null,           // the watched node's id (the daemon's: another after a restart, and a freed id goes to the next object)
  nodeName: null,         // ... and its node.name: what the page follows (see chooseNode)
  node: null,             // the watched node's object as the server last sent it (the truth)
  local: new Map(),       // key -> {v, until}: optimistic values (dragging, requests on their way)
  wsUp: false,
  daemonUp: true,
  daemon: '',
  presets: [],
};

function keyOf(tg) {
  switch (tg.t) {
    case 'cell': return 'matrix.' + tg.i + '.' + tg.j;
    case 'in': return 'gain.in.' + tg.i;
    case 'out': return 'gain.out.' + tg.j;
    default: return 'gain.master';
  }
}
function muteKeyOf(tg) {
  switch (tg.t) {
    case 'cell': return 'mute.out.' + tg.j;   // m on a cell mutes the cell's output column
    case 'in': return 'mute.in.' + tg.i;
    case 'out': return 'mute.out.' + tg.j;
    default: return 'mute.master';
  }
}
function serverValue(key) {
  const n = S.node;
  if (!n) return undefined;
  const p = key.split('.');
  if (p[0] === 'matrix') return (n.matrix[+p[1]] || [])[+p[2]];
  if (p.length === 3) return (n[p[0] + '.' + p[1]] || [])[+p[2]];
  return n[key];
}
function value(key) {
  if (S.local.size) {
    const o = S.local.get(key);
    if (o) return o.v;
  }
  return serverValue(key);
}
const cellGain = (i, j) => {
  if (S.local.size) {
    const o = S.local.get('matrix.' + i + '.' + j);
    if (o) return o.v;
  }
  return S.node.matrix[i][j];
};
/** Output j's delay in ms (0 when the node writes none). */
const delayOf = (j) => { const v = value('delay.out.' + j); return typeof v === 'number' ? v : 0; };
const fmtMs = (ms) => (Math.round(ms * 1000) / 1000) + ' ms';
const gainOf = (tg) => { const v = value(keyOf(tg)); return typeof v === 'number' ? v : 0; };
const muteOf = (tg) => !!value(muteKeyOf(tg));

/** A local change: shown at once, sent through the queue. */
function change(key, v) {
  S.local.set(key, { v, until: Infinity });
  Q.put(key, v);
  scheduleRender();
}

/** The server's node arrived (WebSocket `node`, or the answer of a POST). */
function applyNode(node, fromSocket) {
  if (!node || node.id !== S.nodeId || (S.nodeName != null && node.name !== S.nodeName)) return;
  const prev = S.node;
  S.node = node;
  if (fromSocket && S.local.size) {
    // A local value settles once the node reports it (or when its time is up, see sweepLocal).
    for (const [k, o] of S.local) {
      if (o.until === Infinity) continue;
      const sv = serverValue(k);
      if (sv === o.v || (typeof sv === 'number' && Math.abs(sv - o.v) <= 1e-4 * Math.max(1, Math.abs(o.v)))) S.local.delete(k);
    }
  }
  const title = (node.description || node.name) + ' · Crosspoint';
  if (document.title !== title) document.title = title;
  if (!prev || prev.inputs !== node.inputs || prev.outputs !== node.outputs) buildGrid();
  else {
    const sig = layoutSig(node);
    if (sig !== FIT.sig) { FIT.sig = sig; relayout(); }
    scheduleRender();
  }
  renderHeader();
}
function sweepLocal(now) {
  for (const [k, o] of S.local) if (o.until < now) S.local.delete(k);
}

/* ================================================================ 3. network */

/* The token: the server sets it as an HttpOnly cookie when the page is opened from the address
 * `crosspoint serve` printed (…/?token=…) and takes it out of the address; every request of the
 * page carries the cookie, so this script never holds the token. Without it every API request
 * answers 401, and the page says how to open it. */
function needToken() {
  if (S.locked) return;
  S.locked = true;
  if (ws) ws.close();
  renderStatus();
  showEmpty('This page needs the server\'s token: open the address `crosspoint serve` printed (it ends in ?token=…). The token is also in ~/.config/crosspoint/serve-token.');
}

class ApiError extends Error {
  constructor(message, key, status) { super(message); this.key = key; this.status = status; }
}

async function api(path, method = 'GET', body) {
  const headers = {};
  if (method !== 'GET') headers['Content-Type'] = 'application/json';
  const opts = { method, headers, cache: 'no-store' };
  if (body !== undefined) opts.body = JSON.stringify(body);
  let res;
  try { res = await fetch(path, opts); } catch (e) {
    throw new ApiError('Cannot reach the Crosspoint server (' + e.message + ')', null, 0);
  }
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { /* not JSON */ }
  if (res.status === 401) needToken();
  if (!res.ok) throw new ApiError((data && data.error) || ('HTTP ' + res.status + ' ' + res.statusText), data && data.key, res.status);
  return data;
}

/** The change queue: at most one request in flight, at most ~30 a second; pending values of
 *  the same key merge (the last one wins, so the last value always lands). `solo` entries
 *  (typed values, renames, counts) go in a request of their own so their error is theirs. */
const Q = {
  batches: [],   // [{solo, entries: Map key -> {v, waiters: []}}]
  inflight: false,
  timer: 0,
  last: 0,
  put(key, v, solo = false) {
    return new Promise((resolve, reject) => {
      let b = this.batches[this.batches.length - 1];
      if (solo || !b || b.solo) {
        b = { solo, entries: new Map() };
        this.batches.push(b);
      }
      const prev = b.entries.get(key);
      const waiters = prev ? prev.waiters : [];
      waiters.push({ resolve, reject });
      b.entries.delete(key);           // re-inserted last: order of params = order of changes
      b.entries.set(key, { v, waiters });
      this.kick();
    });
  },
  pending(key) { return this.batches.some((b) => b.entries.has(key)); },
  clear() {
    for (const b of this.batches) for (const e of b.entries.values()) for (const w of e.waiters) w.reject(new ApiError('cancelled', null, 0));
    this.batches = [];
  },
  kick() {
    if (this.inflight || this.timer || !this.batches.length) return;
    const wait = Math.max(0, this.last + SEND_MS - performance.now());
    this.timer = setTimeout(() => { this.timer = 0; this.flush(); }, wait);
  },
  async flush() {
    if (this.inflight || !this.batches.length) return;
    const b = this.batches.shift();
    const id = S.nodeId;
    if (id == null) { this.clear(); return; }
    const params = [];
    for (const [k, e] of b.entries) params.push(k, e.v);
    this.inflight = true;
    this.last = performance.now();
    window.crosspointStats.requests++;
    let result, error;
    try { result = await api('api/nodes/' + encodeURIComponent(id), 'POST', { params }); } catch (e) { error = e; }
    this.inflight = false;
    if (id === S.nodeId) {
      const now = performance.now();
      for (const [k, e] of b.entries) {
        const o = S.local.get(k);
        if (o && o.v === e.v && !this.pending(k)) {
          if (error) S.local.delete(k);
          else o.until = now + 600;      // keep showing it until the node reports it
        }
      }
      if (result && result.node) applyNode(result.node, false);
      if (error && !b.solo) toast(error.message);
      scheduleRender();
    }
    for (const e of b.entries.values()) for (const w of e.waiters) error ? w.reject(error) : w.resolve(result);
    this.kick();
  },
};
// Unhandled rejections of fire-and-forget changes are reported by toast in flush already.
window.addEventListener('unhandledrejection', (ev) => { if (ev.reason instanceof ApiError) ev.preventDefault(); });

let ws = null;
function connect() {
  if (S.locked) return;
  const u = new URL('api/stream', location.href);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  const sock = new WebSocket(u.href);
  ws = sock;
  sock.onopen = () => {
    S.wsUp = true;
    if (S.nodeId != null) sendWatch(S.nodeId);
    renderStatus();
  };
  sock.onmessage = (ev) => {
    let m;
    try { m = JSON.parse(ev.data); } catch (e) { return; }
    onMessage(m);
  };
  sock.onclose = () => {
    if (ws === sock) ws = null;
    S.wsUp = false;
    renderStatus();
    setTimeout(connect, 1000);
  };
  sock.onerror = () => { /* onclose follows */ };
}
function sendWatch(id) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ watch: id }));
}

function onMessage(m) {
  switch (m.type) {
    case 'status':
      S.daemonUp = !!m.connected;
      renderStatus();
      if (S.daemonUp && S.nodeId != null) sendWatch(S.nodeId);
      break;
    case 'nodes':
      S.nodes = Array.isArray(m.nodes) ? m.nodes : [];
      renderPicker();
      chooseNode();
      break;
    case 'node':
      if (m.node && m.node.id === S.nodeId) applyNode(m.node, true);
      break;
    case 'levels':
      if (m.id === S.nodeId) onLevels(m);
      break;
    case 'apps':
      AP.data = m;
      renderApps();
      break;
    case 'gone':
      if (m.id === S.nodeId) {
        if (S.nodeName != null) unwatch(S.nodeName);
        else {
          S.node = null;
          showEmpty('The node went away. Waiting for it (or pick another)…');
          renderHeader();
        }
      }
      break;
    case 'error':
      toast(m.error || 'The server could not use a message');
      break;
  }
}

/* ================================================================ 4. header */

const LS_NODE = 'crosspoint.node';

function renderStatus() {
  const st = $('status');
  const up = S.wsUp && S.daemonUp;
  st.dataset.connected = String(up);
  if (S.locked) st.textContent = 'No token: open the address `crosspoint serve` printed';
  else if (!S.wsUp) st.textContent = 'Server disconnected: reconnecting every second…';
  else if (!S.daemonUp) st.textContent = 'PipeWire disconnected: the server is reconnecting…';
  else st.textContent = 'connected' + (S.daemon ? ' · ' + S.daemon : '');
  document.body.classList.toggle('offline', !up);
}

function renderPicker() {
  const sel = $('node-picker');
  const want = S.nodeId == null ? '' : String(S.nodeId);
  sel.textContent = '';
  if (!S.nodes.length) {
    sel.append(h('option', { value: '', text: 'No Crosspoint node' }));
    sel.disabled = true;
  } else {
    sel.disabled = false;
    for (const n of S.nodes) {
      sel.append(h('option', { value: String(n.id), text: (n.description || n.name) + '  (' + n.name + ' · ' + n.id + ')' }));
    }
  }
  sel.value = want;
  renderNodeInfo();
}
function renderNodeInfo() {
  const n = S.nodes.find((x) => x.id === S.nodeId);
  $('nodeinfo').textContent = n ? n.name + ' · id ' + n.id + ' · ' + n.inputs + '×' + n.outputs : '';
}

function chooseNode() {
  // The node watched is followed by its name: after a daemon restart it may have another id,
  // and its old id another node (objects take ids in the order they are made). While it is
  // not there the page waits for it rather than show another node in its place.
  if (S.nodeName != null) {
    const same = S.nodes.find((n) => n.name === S.nodeName);
    if (same && same.id === S.nodeId) { renderNodeInfo(); return; }
    if (same) { watch(same.id); return; }
    if (S.nodeId != null) unwatch(S.nodeName);
    renderNodeInfo();
    return;
  }
  let saved = null;
  try { saved = JSON.parse(localStorage.getItem(LS_NODE) || 'null'); } catch (e) { /* ignore */ }
  // ?node=NAME_OR_ID in the page address picks a node (a bookmark); then the last choice.
  const asked = new URLSearchParams(location.search).get('node');
  const pick = (asked && S.nodes.find((n) => n.name === asked || String(n.id) === asked)) ||
    (saved && (S.nodes.find((n) => n.name === saved.name) || S.nodes.find((n) => n.id === saved.id))) || S.nodes[0];
  watch(pick ? pick.id : null);
}

function watch(id) {
  if (id === S.nodeId && S.node) return;
  Q.clear();
  closeEditor();
  S.nodeId = id;
  const n = id == null ? null : S.nodes.find((x) => x.id === id);
  S.nodeName = n ? n.name : null;
  S.node = null;
  S.local.clear();
  resetMeters();
  $('node-picker').value = id == null ? '' : String(id);
  renderNodeInfo();
  if (id == null) showEmpty(S.wsUp ? 'No Crosspoint node on this PipeWire. Load the module (see README) and it appears here.' : 'Connecting…');
  else showEmpty('Loading…');
  renderHeader();
  sendWatch(id);
  if (id != null && !(ws && ws.readyState === WebSocket.OPEN)) {
    api('api/nodes/' + id).then((n) => applyNode(n, false)).catch(() => {});
  }
}

/** The watched node is gone: nothing is sent to its old id (which the next node made may take),
 * and the page waits for a node of that name. */
function unwatch(name) {
  Q.clear();
  closeEditor();
  S.nodeId = null;
  S.node = null;
  S.local.clear();
  resetMeters();
  $('node-picker').value = '';
  showEmpty(name + ' went away. Waiting for it (or pick another)…');
  renderHeader();
  sendWatch(null);
}

function showEmpty(text) {
  const e = $('empty');
  if (text) { e.textContent = text; e.hidden = false; } else e.hidden = true;
}

/** Master, ramp and counts; fields being edited are left alone. */
function renderHeader() {
  renderMidi();
  renderDevices();
  renderDucking();
  const n = S.node;
  const mg = $('master-gain');
  const g = n ? gainOf({ t: 'master' }) : 1;
  const txt = fmtGain(g);
  if (mg.textContent !== txt) mg.textContent = txt;
  mg.classList.toggle('off', g === 0);
  mg.classList.toggle('flip', g < 0);
  mg.setAttribute('aria-valuetext', sayGain(g));
  const mm = $('master-mute');
  const muted = n ? muteOf({ t: 'master' }) : false;
  mm.setAttribute('aria-pressed', String(muted));
  mm.textContent = muted ? 'Muted' : 'Mute';
  document.body.classList.toggle('master-muted', muted);
  renderScenes();
  for (const [id, v] of [['ramp', n && value('ramp.ms')], ['inputs-count', n && n.inputs], ['outputs-count', n && n.outputs]]) {
    const f = $(id);
    f.disabled = !n;
    const typing = document.activeElement === f || (f._emptied && performance.now() - f._emptied < 4000);
    if (!typing && v != null && f.value !== String(v)) f.value = String(v);
  }
}

/* The parameter table (GET api/params, what `crosspoint params` prints): key -> {type,
 * default, min, max, unit, meaning}. The number fields take their ranges and words from it. */
const P = new Map();
const numberFields = [];
async function loadParams() {
  let rows;
  try { rows = (await api('api/params')) || []; } catch (e) { return; }   // the server checks every value anyway
  for (const r of rows) P.set(r.key, r);
  const g = P.get('gain.master');
  if (g) { MAX_DB = 20 * Math.log10(g.max); shadeCache.clear(); }
  for (const describe of numberFields) describe();
}

/** A number field for one key of one value (ramp.ms, inputs, outputs): its range, whether it
 *  is whole and its title from the parameter table. */
function numberField(id, key) {
  const f = $(id);
  numberFields.push(() => {
    const p = P.get(key);
    if (!p) return;
    f.min = String(p.min);
    f.max = String(p.max);
    f.title = p.meaning + ' (' + p.min + ' to ' + p.max + (p.unit === 'ms' ? ' ms' : '') + ')';
  });
  const submit = () => {
    if (!S.node) return;
    if (f.value.trim() === '') return;      // being cleared to type a new number
    const v = Number(f.value);
    const current = value(key);
    const p = P.get(key);
    if (!isFinite(v) || (p && (v < p.min || v > p.max || (p.type === 'Int' && !Number.isInteger(v))))) {
      toast(key + ': ' + (p && p.type === 'Int' ? 'a whole number' : 'a number') + (p ? ' from ' + p.min + ' to ' + p.max : ''));
      f.value = String(current);
      return;
    }
    if (v === current) return;
    Q.put(key, v, true).catch((e) => { toast(e.message); f.value = String(S.node ? S.node[key] : ''); });
  };
  f.addEventListener('change', submit);
  // A field emptied to type a new number is left empty a while even without focus.
  const mark = () => { f._emptied = f.value.trim() === '' ? performance.now() : 0; };
  f.addEventListener('input', mark);
  f.addEventListener('change', mark);
  f.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') { f.blur(); }
    else if (e.key === 'Escape') { f.value = String(S.node ? value(key) : ''); f.blur(); }
  });
}

/* presets */
async function loadPresets(select) {
  try {
    S.presets = (await api('api/presets')) || [];
  } catch (e) { toast('Presets: ' + e.message); return; }
  const list = $('preset-list');
  const keep = select || list.value;
  list.textContent = '';
  if (!S.presets.length) list.append(h('option', { value: '', text: 'no presets yet' }));
  for (const p of S.presets) list.append(h('option', { value: p.name, text: p.name + '  ' + p.inputs + '×' + p.outputs }));
  if (keep && S.presets.some((p) => p.name === keep)) list.value = keep;
  $('preset-load').disabled = $('preset-delete').disabled = !S.presets.length;
}
/* scenes (README: Scenes): the node's scenes by name, a recall over a time (the node moves by
 * itself), storing the mix, and the morph fader when scene.morph.between names two scenes. */
function sceneNames() {
  const lines = (S.node && S.node.scenes) || [];
  return lines.map((line) => String(line).split(' ')[0]);
}
function renderScenes() {
  const n = S.node, names = sceneNames(), list = $('scene-list');
  const shown = Array.from(list.options).map((o) => o.value).filter((v) => v);
  if (shown.join(' ') !== names.join(' ')) {
    const keep = list.value;
    list.textContent = '';
    if (!names.length) list.append(h('option', { value: '', text: 'no scenes yet' }));
    for (const nm of names) list.append(h('option', { value: nm, text: nm }));
    if (names.includes(keep)) list.value = keep;
  }
  $('scene-recall').disabled = !n || !names.length;
  $('scene-store').disabled = !n;
  const between = (n && n['scene.morph.between']) || [];
  const group = $('morph-group'), fader = $('scene-morph');
  group.hidden = between.length !== 2;
  if (between.length === 2) {
    $('morph-from').textContent = between[0];
    $('morph-to').textContent = between[1];
    const pos = value('scene.morph');
    if (document.activeElement !== fader && typeof pos === 'number' && fader.value !== String(pos)) fader.value = String(pos);
    fader.setAttribute('aria-valuetext', Math.round(100 * Number(fader.value)) + '% from ' + between[0] + ' to ' + between[1]);
  }
}
function sceneControls() {
  const list = $('scene-list'), name = $('scene-name');
  const recall = async () => {
    const nm = list.value;
    if (!nm || S.nodeId == null) return;
    const time = $('scene-time').value.trim() || '0';
    try {
      await Q.put('scene.recall', time === '0' || time === '0s' ? [nm] : [nm, time], true);
      notice('Recalling ' + nm + (time === '0' || time === '0s' ? '' : ' over ' + time));
    } catch (e) { toast(e.message); }
  };
  $('scene-recall').addEventListener('click', recall);
  const store = async () => {
    const nm = name.value.trim() || list.value;
    if (!nm) { toast('Type a name for the scene'); name.focus(); return; }
    if (S.nodeId == null) return;
    try {
      const r = await api('api/nodes/' + encodeURIComponent(S.nodeId) + '/scenes', 'POST', { store: nm });
      if (r && r.node) applyNode(r.node, false);
      list.value = nm;
      notice('Stored ' + nm);
    } catch (e) { toast(e.message); }
  };
  $('scene-store').addEventListener('click', store);
  name.addEventListener('keydown', (e) => { if (e.key === 'Enter') store(); });
  // The fader sends as it moves (the queue keeps the last of a burst), as a gain's drag does.
  $('scene-morph').addEventListener('input', (e) => change('scene.morph', Number(e.target.value)));
}

function presetControls() {
  const list = $('preset-list'), name = $('preset-name');
  list.addEventListener('change', () => { if (list.value) name.value = list.value; });
  const save = async () => {
    const nm = name.value.trim() || list.value;
    if (!nm) { toast('Type a name for the preset'); name.focus(); return; }
    if (S.nodeId == null) return;
    try {
      await api('api/nodes/' + S.nodeId + '/save', 'POST', { name: nm });
      notice('Saved ' + nm);
      await loadPresets(nm);
    } catch (e) { toast(e.message); }
  };
  $('preset-save').addEventListener('click', save);
  name.addEventListener('keydown', (e) => { if (e.key === 'Enter') save(); });
  $('preset-load').addEventListener('click', async () => {
    const nm = list.value;
    if (!nm || S.nodeId == null) return;
    try {
      const r = await api('api/nodes/' + S.nodeId + '/load', 'POST', { name: nm });
      if (r && r.node) applyNode(r.node, false);
      notice('Loaded ' + nm);
    } catch (e) { toast(e.message); }
  });
  // Delete asks twice: the first click arms the button for 3 s.
  const del = $('preset-delete');
  let armed = 0;
  del.addEventListener('click', async () => {
    const nm = list.value;
    if (!nm) return;
    if (!armed) {
      del.classList.add('armed');
      del.textContent = 'Delete ' + nm + '?';
      armed = setTimeout(() => { armed = 0; del.classList.remove('armed'); del.textContent = 'Delete'; }, 3000);
      return;
    }
    clearTimeout(armed); armed = 0;
    del.classList.remove('armed'); del.textContent = 'Delete';
    try {
      await api('api/presets/' + encodeURIComponent(nm), 'DELETE');
      notice('Deleted ' + nm);
      await loadPresets();
    } catch (e) { toast(e.message); }
  });
}

/* ================================================================ 5. grid */

const G = {
  vp: null, canvas: null, colheads: null, corner: null, rowheads: null, cellsLayer: null,
  cw: 58, rh: 38, rw: 304, ch: 206,
  ni: 0, no: 0,
  r0: 0, r1: -1, c0: 0, c1: -1,           // rendered ranges (inclusive)
  cells: new Map(),                      // i * 65536 + j -> element
  rows: new Map(),                       // i -> input strip
  cols: new Map(),                       // j -> output strip
  cur: { t: 'cell', i: 0, j: 0 },        // keyboard cursor
  curEl: null,
  hover: null,
  rendered: false,
};
window.crosspointStats = { renderMs: null, firstRenderMs: null, builds: 0, patches: 0, lastPatchMs: 0, cellsInDom: 0, framesMeters: 0, meterFrameMs: 0, requests: 0 };

function readDims() {
  const cs = getComputedStyle(G.vp);
  const px = (n, d) => parseFloat(cs.getPropertyValue(n)) || d;
  const d = { cw: px('--cw', 58), rh: px('--rh', 38), rw: px('--rw', 304), ch: px('--ch', 206) };
  const changed = d.cw !== G.cw || d.rh !== G.rh || d.rw !== G.rw || d.ch !== G.ch;
  Object.assign(G, d);
  return changed;
}

function initGrid() {
  G.vp = $('grid');
  G.canvas = h('div', { class: 'canvas' });
  G.colheads = h('div', { class: 'colheads' });
  G.corner = h('div', { class: 'corner' });
  G.rowheads = h('div', { class: 'rowheads', role: 'rowgroup' });
  G.cellsLayer = h('div', { class: 'cells' });
  G.colheads.append(G.corner);
  G.canvas.append(G.colheads, G.rowheads, G.cellsLayer);
  G.vp.append(G.canvas);
  readDims();
  let ticking = false;
  G.vp.addEventListener('scroll', () => {
    if (ticking) return;
    ticking = true;
    requestAnimationFrame(() => { ticking = false; updateVirtual(); });
    if (ED.el && ED.inGrid) closeEditor();
  }, { passive: true });
  new ResizeObserver(() => relayout()).observe(G.vp);
}

/* The grid's sizes for the node and the room there is (window, devices panel): the columns
 * share the width, as wide as makes the heads easy to read (at most CW_MAX), never narrower
 * than the style's --cw (then the grid scrolls sideways); the input strips' names widen to
 * their longest name or device label when there is room. Output names are written across
 * when every column can hold the longest, else up the column beside its meter (the head is
 * then taller), never cut. The style's values (media queries: tablets, short windows) are the
 * smallest; the chosen ones are set on the grid, where every part reads them. */
const CW_MAX = 150;
const FIT = { ctx: null, probe: null, sb: -1, sig: '' };
function textWidth(text, font) {
  if (!FIT.ctx) FIT.ctx = document.createElement('canvas').getContext('2d');
  FIT.ctx.font = font;
  return FIT.ctx.measureText(text).width;
}
/** The fonts of the heads' texts, read from the style once (a hidden strip of each side). */
function headFonts() {
  if (FIT.fonts) return FIT.fonts;
  const font = (e) => { const c = getComputedStyle(e); return c.fontWeight + ' ' + c.fontSize + ' ' + c.fontFamily; };
  const o = h('div', { class: 'ostrip', 'aria-hidden': 'true' }, h('button', { class: 'chname', text: 'x' }), h('span', { class: 'links', text: 'x' }));
  // (A device's label is the bolder: every input label is measured as one.)
  const i = h('div', { class: 'istrip', 'aria-hidden': 'true' }, h('div', { class: 'nm' }, h('button', { class: 'chname', text: 'x' }), h('span', { class: 'links dev', text: 'x' })));
  for (const e of [o, i]) { e.style.visibility = 'hidden'; e.style.left = '-10000px'; G.canvas.append(e); }
  FIT.fonts = { out: font(o.firstChild), inName: font(i.querySelector('.chname')), inLinks: font(i.querySelector('.links')) };
  o.remove(); i.remove();
  return FIT.fonts;
}
function scrollbarWidth() {
  if (FIT.sb < 0) {
    const d = h('div');
    d.style.cssText = 'position:absolute;top:-200px;width:100px;height:100px;overflow:scroll';
    document.body.append(d);
    FIT.sb = d.offsetWidth - d.clientWidth;
    d.remove();
  }
  return FIT.sb;
}
/** What the layout depends on in the node: shape, names, input labels, whether groups exist. */
function layoutSig(n) {
  const ins = [];
  for (let i = 0; i < n.inputs; i++) ins.push(inLabel(i) || '');
  return [n.inputs, n.outputs, (n.targets || []).length > 0, n['output.position'].join('\u0001'),
    n['input.position'].join('\u0001'), ins.join('\u0001')].join('\u0002');
}
/** Chooses the sizes; returns whether the way output names are written changed. */
function fitLayout() {
  const n = S.node;
  if (!n || !G.vp) return false;
  const base = getComputedStyle(document.documentElement);
  const px = (k, d) => parseFloat(base.getPropertyValue(k)) || d;
  const cw0 = px('--cw', 58), rw0 = px('--rw', 304), ch0 = px('--ch', 206), namew0 = px('--namew', 112), rh = px('--rh', 38);
  const f = headFonts();
  let nameNeed = 0;
  for (let j = 0; j < n.outputs; j++) nameNeed = Math.max(nameNeed, textWidth(n['output.position'][j] || String(j), f.out));
  nameNeed = Math.ceil(nameNeed) + 12;               // the strip's padding, and some air
  let inNeed = 0;
  for (let i = 0; i < n.inputs; i++) {
    inNeed = Math.max(inNeed, textWidth(n['input.position'][i] || String(i), f.inName) + 4, textWidth(inLabel(i) || '', f.inLinks) + 4);
  }
  const wantNamew = Math.max(namew0, Math.min(230, Math.ceil(inNeed) + 4));
  const rest = rw0 - namew0;                         // gain, mute, meter: what is not the name
  const no = n.outputs, ni = n.inputs;
  const W = G.vp.offsetWidth, H = G.vp.offsetHeight;
  const room = (ch) => W - (ch + ni * rh > H ? scrollbarWidth() : 0);
  const across = Math.max(cw0, nameNeed);
  // Across, a head holds its name, two lines of links, the picker (when the node has groups),
  // some meter, gain, mute and delay: a short window's smaller head (the style's) grows to that.
  const groups = (n.targets || []).length > 0;
  let vertical = false, namew, cw, ch = Math.max(ch0, groups ? 196 : 176);
  let a = room(ch);
  if (a - (wantNamew + rest) >= no * across) namew = wantNamew;
  else if (a - rw0 >= no * across) namew = Math.max(namew0, Math.min(wantNamew, a - rest - no * across));
  if (namew !== undefined) {
    cw = Math.max(across, Math.min(Math.max(CW_MAX, across), Math.floor((a - namew - rest) / no)));
  } else {
    // Up the column: the head grows by what the longest name needs beside its meter (the
    // parts above and below it: padding, two lines of links, the picker, gain, mute, delay).
    vertical = true;
    ch = Math.max(ch0, (groups ? 150 : 132) + nameNeed);
    a = room(ch);
    namew = Math.max(namew0, Math.min(wantNamew, a - rest - no * cw0));
    cw = Math.max(cw0, Math.min(CW_MAX, Math.floor((a - namew - rest) / no)));
  }
  const st = G.vp.style;
  st.setProperty('--cw', cw + 'px');
  st.setProperty('--namew', namew + 'px');
  st.setProperty('--rw', (namew + rest) + 'px');
  st.setProperty('--ch', ch + 'px');
  const was = G.vp.classList.contains('vnames');
  G.vp.classList.toggle('vnames', vertical);
  return was !== vertical;
}
/** Sizes chosen again (the room or the node changed); strips made again if names turned. */
function relayout() {
  const turned = fitLayout();
  if (turned) {
    for (const e of G.cols.values()) e.remove();
    G.cols.clear();
    G.c0 = 0; G.c1 = -1;
  }
  if (readDims() || turned) {
    layoutCanvas(true);
    for (const e of G.cols.values()) e._k = '';
    scheduleRender();
  }
  updateVirtual();
}

function layoutCanvas(reposition) {
  const W = G.rw + G.no * G.cw, H = G.ch + G.ni * G.rh;
  G.canvas.style.width = W + 'px';
  G.canvas.style.height = H + 'px';
  G.colheads.style.width = W + 'px';
  G.rowheads.style.height = G.ni * G.rh + 'px';
  G.cellsLayer.style.width = G.no * G.cw + 'px';
  G.cellsLayer.style.height = G.ni * G.rh + 'px';
  if (reposition) {
    for (const [k, e] of G.cells) e.style.transform = `translate(${(k & 0xffff) * G.cw}px,${(k >>> 16) * G.rh}px)`;
    for (const [i, e] of G.rows) e.style.transform = `translateY(${i * G.rh}px)`;
    for (const [j, e] of G.cols) e.style.transform = `translateX(${G.rw + j * G.cw}px)`;
  }
}

/** A whole new grid (first node, other node, other shape). */
function buildGrid() {
  const t0 = performance.now();
  const n = S.node;
  for (const e of G.cells.values()) e.remove();
  for (const e of G.rows.values()) e.remove();
  for (const e of G.cols.values()) e.remove();
  G.cells.clear(); G.rows.clear(); G.cols.clear();
  G.r0 = 0; G.r1 = -1; G.c0 = 0; G.c1 = -1;
  G.curEl = null;
  if (!n) { showEmpty('Loading…'); return; }
  showEmpty(null);
  G.ni = n.inputs; G.no = n.outputs;
  const c = G.cur;
  if (c.t === 'cell' || c.t === 'in') c.i = Math.min(c.i, G.ni - 1);
  if (c.t === 'cell' || c.t === 'out') c.j = Math.min(c.j, G.no - 1);
  resizeMeters();
  FIT.sig = layoutSig(n);
  fitLayout();
  readDims();
  layoutCanvas(false);
  G.corner.innerHTML = '';
  G.corner.append(
    h('div', { class: 'o' }, h('b', { text: n.outputs }), ' output' + (n.outputs === 1 ? '' : 's') + ' →'),
    h('div', { class: 'scale', text: 'meters −60…0 dBFS: peak above, RMS below (outputs: left, right)' }),
    h('div', {}, h('b', { text: n.inputs }), ' input' + (n.inputs === 1 ? '' : 's') + ' ↓'));
  updateVirtual();
  G.canvas.getBoundingClientRect();    // include layout in the measurement
  const ms = performance.now() - t0;
  const st = window.crosspointStats;
  st.renderMs = Math.round(ms * 10) / 10;
  if (st.firstRenderMs == null) st.firstRenderMs = st.renderMs;
  st.builds++;
  st.inputs = G.ni; st.outputs = G.no; st.nodeId = n.id;
  st.cellsInDom = G.cells.size;
  G.rendered = true;
}

/** Creates what came into view and removes what left it. */
function updateVirtual() {
  if (!S.node || !G.ni) return;
  const vp = G.vp;
  const sl = vp.scrollLeft, st = vp.scrollTop, w = vp.clientWidth, hh = vp.clientHeight;
  const over = 2;
  const c0 = Math.max(0, Math.floor(sl / G.cw) - over);
  const c1 = Math.min(G.no - 1, Math.ceil((sl + w - G.rw) / G.cw) + over);
  const r0 = Math.max(0, Math.floor(st / G.rh) - over);
  const r1 = Math.min(G.ni - 1, Math.ceil((st + hh - G.ch) / G.rh) + over);
  if (r0 === G.r0 && r1 === G.r1 && c0 === G.c0 && c1 === G.c1) return;
  // remove
  for (const [k, e] of G.cells) {
    const i = k >>> 16, j = k & 0xffff;
    if (i < r0 || i > r1 || j < c0 || j > c1) { e.remove(); G.cells.delete(k); }
  }
  for (const [i, e] of G.rows) if (i < r0 || i > r1) { e.remove(); G.rows.delete(i); }
  for (const [j, e] of G.cols) if (j < c0 || j > c1) { e.remove(); G.cols.delete(j); }
  // add
  const fc = document.createDocumentFragment(), fr = document.createDocumentFragment(), fo = document.createDocumentFragment();
  for (let i = r0; i <= r1; i++) {
    if (!G.rows.has(i)) { const e = makeInStrip(i); G.rows.set(i, e); fr.append(e); }
    for (let j = c0; j <= c1; j++) {
      const k = i * 65536 + j;
      if (!G.cells.has(k)) { const e = makeCell(i, j); G.cells.set(k, e); fc.append(e); }
    }
  }
  for (let j = c0; j <= c1; j++) if (!G.cols.has(j)) { const e = makeOutStrip(j); G.cols.set(j, e); fo.append(e); }
  G.cellsLayer.append(fc);
  G.rowheads.append(fr);
  G.colheads.append(fo);
  G.r0 = r0; G.r1 = r1; G.c0 = c0; G.c1 = c1;
  window.crosspointStats.cellsInDom = G.cells.size;
  markCursor();
  markHover();
}

/* cells */
const shadeCache = new Map();
function shade(g) {
  if (g === 0) return '';
  const db = Math.round(toDb(g) * 2) / 2;
  const key = (g < 0 ? -1 : 1) * (db + 1000);
  let s = shadeCache.get(key);
  if (s) return s;
  const f = Math.max(0, Math.min(1, (db - FLOOR_DB) / -FLOOR_DB));  // 0 at -60 dB, 1 at 0 dB
  const over = Math.max(0, Math.min(1, db / MAX_DB));                // above unity
  const t = Math.pow(f, 2.2);
  if (g > 0) {
    const hue = 158 - over * 110, sat = 38 + 22 * t, light = 12 + 17 * t + over * 3;
    s = `hsl(${hue.toFixed(0)} ${sat.toFixed(0)}% ${light.toFixed(1)}%)`;
  } else {
    const hue = 282 - over * 30, sat = 32 + 26 * t, light = 13 + 18 * t + over * 3;
    s = `hsl(${hue.toFixed(0)} ${sat.toFixed(0)}% ${light.toFixed(1)}%)`;
  }
  shadeCache.set(key, s);
  return s;
}

function makeCell(i, j) {
  const e = document.createElement('div');
  e.className = 'cell' + ((j + 1) % 8 === 0 ? ' g8r' : '') + ((i + 1) % 8 === 0 ? ' g8b' : '');
  e.setAttribute('role', 'gridcell');
  e.setAttribute('data-testid', 'cell-' + i + '-' + j);
  e.id = 'x-' + i + '-' + j;
  e.dataset.v = 'cell';
  e._i = i; e._j = j; e._g = NaN; e._dead = false; e._lbl = '';
  e.style.transform = `translate(${j * G.cw}px,${i * G.rh}px)`;
  patchCell(e, i, j);
  return e;
}
function patchCell(e, i, j) {
  const n = S.node;
  const g = cellGain(i, j);
  if (g !== e._g) {
    e._g = g;
    e.setAttribute('data-gain', String(g));
    const t = fmtCell(g);
    e.textContent = t === null ? '·' : t;
    e.style.background = shade(g);
    e.classList.toggle('off', g === 0);
    e.classList.toggle('unity', isUnity(Math.abs(g)));
    e.classList.toggle('flip', g < 0);
    e._lbl = '';
  }
  const lbl = n['input.ports'][i] + ' to ' + n['output.ports'][j];
  if (e._lbl !== lbl) {
    e._lbl = lbl;
    e.setAttribute('aria-label', lbl + ', ' + sayGain(g));
  }
  const dead = muteOf({ t: 'in', i }) || muteOf({ t: 'out', j });
  if (dead !== e._dead) { e._dead = dead; e.classList.toggle('dead', dead); }
}

/* strips */
function linkText(links, arrow) {
  if (!links || !links.length) return null;
  return arrow + ' ' + links.join(', ');
}
function meterEls(kind) {
  const m = h('div', { class: 'meter ' + kind });
  const pk = h('div', { class: 'bar pk' }, h('i', { class: 'cover' }));
  const rm = h('div', { class: 'bar rm' }, h('i', { class: 'cover' }));
  const hold = h('i', { class: 'hold' });
  m.append(pk, rm, hold);
  return { m, pkc: pk.firstChild, rmc: rm.firstChild, hold };
}
function makeInStrip(i) {
  const e = h('div', { class: 'istrip' + ((i + 1) % 8 === 0 ? ' g8b' : ''), 'data-testid': 'in-strip-' + i, role: 'rowheader' });
  e.id = 'i-' + i;
  e.style.transform = `translateY(${i * G.rh}px)`;
  const name = h('button', { class: 'chname', 'data-act': 'rename', title: 'Rename this input' });
  const links = h('span', { class: 'links' });
  const gain = h('div', { class: 'val', 'data-testid': 'in-gain-' + i, 'data-v': 'in', role: 'spinbutton' });
  const mute = h('button', { class: 'mute', 'data-testid': 'in-mute-' + i, 'data-act': 'mute', 'aria-pressed': 'false', text: 'M' });
  const me = meterEls('h');
  me.m.setAttribute('data-testid', 'in-meter-' + i);
  me.m.setAttribute('data-peak', '');
  const clip = h('i', { class: 'clip', title: 'Clip (peak at 0 dBFS); click to clear' });
  const gr = h('i', { class: 'gr', 'data-testid': 'in-gr-' + i, title: 'Ducking: how far a rule lowers this input now' });
  const mw = h('div', { class: 'mwrap', 'data-act': 'clip' }, me.m, clip, gr);
  e.append(h('div', { class: 'nm' }, name, links), gain, mute, mw);
  Object.assign(e, { _side: 'in', _i: i, _name: name, _links: links, _gain: gain, _mute: mute, _clip: clip, _me: me, _gr: gr, _k: '' });
  gain._i = i; gain._j = -1;
  initMeterCache(e);
  patchStrip(e);
  return e;
}
function makeOutStrip(j) {
  const e = h('div', { class: 'ostrip' + ((j + 1) % 8 === 0 ? ' g8r' : ''), 'data-testid': 'out-strip-' + j, role: 'columnheader' });
  e.id = 'o-' + j;
  e.style.transform = `translateX(${G.rw + j * G.cw}px)`;
  // A head's label or picker may reach over the heads to its right (runs, below): each head
  // lies over the next.
  e.style.zIndex = String(Math.max(1, G.no - j));
  const name = h('button', { class: 'chname', 'data-act': 'rename', title: 'Rename this output', 'data-testid': 'out-name-' + j });
  const links = h('span', { class: 'links', 'data-testid': 'out-links-' + j });
  const slot = h('div', { class: 'pickslot' });
  const gain = h('div', { class: 'val', 'data-testid': 'out-gain-' + j, 'data-v': 'out', role: 'spinbutton' });
  const mute = h('button', { class: 'mute', 'data-testid': 'out-mute-' + j, 'data-act': 'mute', 'aria-pressed': 'false', text: 'M' });
  const me = meterEls('v');
  me.m.setAttribute('data-testid', 'out-meter-' + j);
  me.m.setAttribute('data-peak', '');
  const clip = h('i', { class: 'clip', title: 'Clip (peak at 0 dBFS); click to clear' });
  const gr = h('i', { class: 'gr', 'data-testid': 'out-gr-' + j, title: 'Ducking: how far a rule lowers this output now' });
  const col = h('div', { class: 'mcol' }, clip, me.m, gr);
  // Names written up the column sit beside the meter; across, above everything.
  const vertical = G.vp.classList.contains('vnames');
  const mw = vertical ? h('div', { class: 'mwrap', 'data-act': 'clip' }, name, col) : h('div', { class: 'mwrap', 'data-act': 'clip' }, col);
  const delay = h('button', { class: 'dly', 'data-testid': 'out-delay-' + j, 'data-act': 'delay' });
  if (vertical) e.append(links, slot, mw, gain, mute, delay);
  else e.append(name, links, slot, mw, gain, mute, delay);
  Object.assign(e, { _side: 'out', _i: j, _name: name, _links: links, _slot: slot, _gain: gain, _mute: mute, _delay: delay, _clip: clip, _me: me, _gr: gr, _k: '' });
  gain._i = -1; gain._j = j;
  initMeterCache(e);
  patchStrip(e);
  return e;
}
/* Virtual devices and output groups (README: Crosspoint as your sound output): the `devices`
 * and `targets` keys' lines, read as the node writes them. */
function parseLine(line) {
  const at = line.indexOf(' description=');
  const words = (at >= 0 ? line.slice(0, at) : line).split(' ').filter(Boolean);
  const o = { first: words[0], second: words[1], description: at >= 0 ? line.slice(at + 13) : null, flags: {} };
  for (const w of words.slice(1)) {
    const eq = w.indexOf('=');
    if (eq > 0) o.flags[w.slice(0, eq)] = w.slice(eq + 1);
  }
  return o;
}
/** True for the kinds of device whose channels feed inputs (a sink, a stream received). */
function feedsInputs(kind) { return kind === 'sink' || kind === 'receive'; }
/** The virtual device (sink or stream received for an input, source or stream sent for an output) carrying channel `name`. */
function deviceOf(name, input) {
  for (const line of S.node.devices || []) {
    const d = parseLine(line);
    if (feedsInputs(d.first) === input && (d.flags.channels || '').split(',').includes(name)) {
      return { name: d.second, description: d.description || d.second };
    }
  }
  return null;
}
/** The output group output `name` is in: its index, its device, and whether `name` comes first in it. */
function groupOf(name) {
  const lines = S.node.targets || [];
  for (let k = 0; k < lines.length; k++) {
    const t = parseLine(lines[k]);
    const outs = t.flags.outputs ? t.flags.outputs.split(',') : S.node['output.position'];
    if (outs.includes(name)) return { k, device: t.first, first: outs[0] === name };
  }
  return null;
}
/** The group's device chosen from the list: the `targets` line with its device replaced. */
function chooseTarget(k, device) {
  const lines = (S.node.targets || []).slice();
  const t = parseLine(lines[k]);
  lines[k] = device + lines[k].slice(t.first.length);
  change('targets', lines);
}
/** What input i's strip says it comes from: a virtual sink and what plays into it, or its links. */
function inLabel(i) {
  const n = S.node;
  const name = n['input.position'][i] || String(i);
  const device = deviceOf(name, true);
  if (device) {
    const streams = (n['device.streams'] || {})[device.name] || [];
    return '◂ ' + device.description + (streams.length ? ': ' + streams.join(', ') : '');
  }
  return linkText((n['input.links'] || [])[i] || [], '←');
}
/** A node's name as a person knows it: a sink's description, else its name. */
function peerLabel(nodeName) {
  const s = (S.node.sinks || []).find((x) => x[0] === nodeName);
  return s ? s[1] : nodeName;
}
/* Output heads in runs: what an output goes to (the virtual source it carries and who records
 * from it, or the nodes its port is linked to: `→ Headphones`, the ports in its tooltip) is
 * written once across the adjacent outputs that go to the same place in the same group, and a
 * group's device picker once across its adjacent outputs. So a stereo pair's device reads in
 * full over two narrow columns. Worked out once per node object. */
const RT = { node: null, list: [] };
function routes() {
  const n = S.node;
  if (RT.node === n) return RT.list;
  const list = [];
  for (let j = 0; j < n.outputs; j++) {
    const name = n['output.position'][j] || String(j);
    const device = deviceOf(name, false);
    const links = (n['output.links'] || [])[j] || [];
    const group = groupOf(name);
    let label = null;
    if (device) {
      const streams = (n['device.streams'] || {})[device.name] || [];
      label = '▸ ' + device.description + (streams.length ? ': ' + streams.join(', ') : '');
    } else if (links.length) {
      const peers = [];
      for (const l of links) {
        const c = l.lastIndexOf(':');
        const p = peerLabel(c > 0 ? l.slice(0, c) : l);
        if (!peers.includes(p)) peers.push(p);
      }
      label = '→ ' + peers.join(', ');
    }
    const r = { label, dev: !!device, group: group ? group.k : -1, device: group ? group.device : null, span: 1, cont: false, pick: 0 };
    const prev = list[j - 1];
    if (prev && prev.label === label && prev.group === r.group) {
      r.cont = true;
      let a = j - 1;
      while (list[a].cont) a--;
      list[a].span++;
    }
    list.push(r);
  }
  const anchored = new Set();
  for (let j = 0; j < list.length; j++) {
    const k = list[j].group;
    if (k < 0 || anchored.has(k)) continue;
    anchored.add(k);
    let span = 1;
    while (j + span < list.length && list[j + span].group === k) span++;
    list[j].pick = span;
  }
  RT.node = n;
  RT.list = list;
  return list;
}
function targetPicker(e) {
  if (e._pick) return e._pick;
  const sel = h('select', { class: 'target', 'data-testid': 'out-target-' + e._i, title: 'The device these outputs follow' });
  sel.addEventListener('change', () => { const g = groupOf(S.node['output.position'][e._i]); if (g) chooseTarget(g.k, sel.value); });
  e._slot.append(sel);
  e._pick = sel;
  return sel;
}

function patchStrip(e) {
  const n = S.node, i = e._i, input = e._side === 'in';
  const tg = input ? { t: 'in', i } : { t: 'out', j: i };
  const name = n[input ? 'input.position' : 'output.position'][i] || String(i);
  const port = n[input ? 'input.ports' : 'output.ports'][i] || '';
  const links = (n[input ? 'input.links' : 'output.links'] || [])[i] || [];
  const g = gainOf(tg), muted = muteOf(tg);
  const route = input ? null : routes()[i];
  const sinks = n.sinks || [];
  const delay = input ? 0 : delayOf(i);
  const lt = input ? inLabel(i) : (route.label || null);
  const k = name + '\u0001' + port + '\u0001' + links.join('\u0002') + '\u0001' + g + '\u0001' + muted + '\u0001' + lt + '\u0001'
    + (input ? '' : JSON.stringify([route, route.pick ? sinks : 0, delay, G.cw, (n.targets || []).length > 0]));
  if (k === e._k) return;
  e._k = k;
  e._name.textContent = name;
  if (input) {
    e._name.classList.toggle('long', name.length > 12);
    e._links.textContent = lt || 'not linked';
    e._links.classList.toggle('none', !lt);
    e._links.classList.toggle('dev', !!deviceOf(name, true));
    e._links.setAttribute('data-testid', 'in-links-' + i);
  } else {
    // The run's first head writes its label across the run; the others leave the line empty.
    e._links.textContent = route.cont ? '' : (lt || 'not linked');
    e._links.style.width = route.cont ? '' : (route.span * G.cw - 6) + 'px';
    e._links.classList.toggle('none', !lt);
    e._links.classList.toggle('dev', route.dev);
    e._links.classList.toggle('run', !route.cont && route.span > 1);
    e._links.classList.toggle('cont', route.cont);
    const groups = (n.targets || []).length > 0;
    e._slot.hidden = !groups;
    if (route.pick) {
      const sel = targetPicker(e);
      const options = [['default', 'Default device']].concat(sinks.map((s) => [s[0], s[1]]));
      if (!options.some((o) => o[0] === route.device)) options.push([route.device, route.device + ' (absent)']);
      sel.replaceChildren(...options.map((o) => h('option', { value: o[0], text: o[1] })));
      sel.value = route.device;
      sel.title = 'These outputs follow: ' + (options.find((o) => o[0] === route.device) || ['', route.device])[1];
      sel.style.width = (route.pick * G.cw - 6) + 'px';
      sel.hidden = false;
    } else if (e._pick) {
      e._pick.hidden = true;
    }
  }
  const what = input ? 'Input ' : 'Output ';
  e.title = what + i + ': ' + name + ' (port ' + port + ')\n' + (links.length ? (input ? 'from ' : 'to ') + links.join('\n    ') : 'not linked')
    + (lt && lt[0] !== '→' && lt[0] !== '←' ? '\n' + lt : '');
  e.setAttribute('aria-label', what + name + ', ' + sayGain(g) + (muted ? ', muted' : '') + ', ' + (lt || 'not linked'));
  const gt = fmtGain(g);
  e._gain.textContent = gt;
  e._gain.classList.toggle('off', g === 0);
  e._gain.classList.toggle('flip', g < 0);
  e._gain.setAttribute('aria-label', what + name + ' gain');
  e._gain.setAttribute('aria-valuetext', sayGain(g));
  e._gain.title = what.trim() + ' gain ' + sayGain(g) + ': drag, wheel or double-click';
  if (!input) {
    // The output's delay (README: a delay per output): shown when set, and set here.
    e._delay.textContent = delay ? fmtMs(delay) : 'delay';
    e._delay.classList.toggle('set', !!delay);
    e._delay.title = (delay ? 'Output ' + name + ' is ' + fmtMs(delay) + ' late' : 'No delay on output ' + name)
      + ': click to set (12ms, 576samples is for the command line; 0 removes it)';
    e._delay.setAttribute('aria-label', 'Delay of output ' + name + ': ' + (delay ? fmtMs(delay) : 'none'));
  }
  e._mute.setAttribute('aria-pressed', String(muted));
  e._mute.setAttribute('aria-label', 'Mute ' + what.toLowerCase() + name);
  e._mute.title = (muted ? 'Unmute ' : 'Mute ') + what.toLowerCase() + name;
}

let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(renderNow);
}
/** Patches what is on screen against the state: only what changed touches the DOM. */
function renderNow() {
  renderQueued = false;
  if (!S.node) return;
  const t0 = performance.now();
  sweepLocal(t0);
  for (const e of G.cells.values()) patchCell(e, e._i, e._j);
  for (const e of G.rows.values()) patchStrip(e);
  for (const e of G.cols.values()) patchStrip(e);
  renderHeader();
  if (S.local.size) scheduleRenderLater();
  const st = window.crosspointStats;
  st.patches++;
  st.lastPatchMs = Math.round((performance.now() - t0) * 10) / 10;
}
let laterTimer = 0;
function scheduleRenderLater() {
  if (laterTimer) return;
  laterTimer = setTimeout(() => { laterTimer = 0; scheduleRender(); }, 250);
}

/* ================================================================ 5b. the devices panel */

/* The node's virtual devices (README: Crosspoint as your sound output), listed with what the
 * node says of each (made, or waiting for a name another node has) and what plays into it;
 * added, renamed and removed by setting the node's `devices` key through the change queue, as
 * `crosspoint virtual add/rename/remove` do: the node checks the lines (a bad name, a name given
 * twice) and adds the channels a new device needs. Nothing is sent that the node would read
 * otherwise than the person meant (a name with a space), and its errors are said in the panel. */
const DV = { open: false, key: '', editing: null, armed: null, armTimer: 0 };
const LS_DEVICES = 'crosspoint.devices-open';

/** The node's devices, read from its lines: {kind, name, description, positions, channels, line}. */
function devicesOf(n) {
  return (n.devices || []).map((line) => {
    const d = parseLine(line);
    return { kind: d.first, name: d.second, description: d.description || d.second,
      positions: (d.flags.position || 'FL,FR').split(','), channels: (d.flags.channels || '').split(',').filter(Boolean), line };
  });
}
/** A device's line with another name and description (its channels and options kept). */
function renamedLine(line, name, description) {
  const at = line.indexOf(' description=');
  const words = (at >= 0 ? line.slice(0, at) : line).split(' ').filter(Boolean);
  words[1] = name;
  return words.join(' ') + ' description=' + description;
}
/** The node's error without what the page sent (`devices: device 4 'sink x ...': `): the reason. */
function deviceReason(message) {
  return message.replace(/^devices: device \d+ '[^]*?': /, '').replace(/^devices: /, '');
}
/** What can be said of a name before sending it: the node reads a line by its spaces. */
function nameProblem(name, others) {
  if (!name) return 'Type a name for the device (what --target and --device take), e.g. game.';
  if (/\s/.test(name)) return `'${name}' is not a device name: no spaces (1 to 48 letters, digits, -, _ and ., starting with a letter or digit).`;
  if (others.includes(name)) return `The node already has a device '${name}': rename or remove that one first.`;
  return null;
}
function setDevices(lines) { return Q.put('devices', lines, true); }

function renderDevices() {
  const n = S.node;
  const count = n ? (n.devices || []).length : 0;
  const t = $('devices-toggle');
  t.disabled = !n;
  $('devices-count').textContent = n ? String(count) : '';
  t.setAttribute('aria-expanded', String(DV.open && !!n));
  const panel = $('devices');
  const show = DV.open && !!n;
  if (panel.hidden === show) panel.hidden = !show;
  if (!show) return;
  const kind = $('dev-kind').value;
  $('dev-carries-label').textContent = feedsInputs(kind) ? 'Inputs it feeds' : 'Outputs it carries';
  // A stream over the network: where it goes (or arrives), its name, a receiver's latency.
  const net = kind === 'send' || kind === 'receive', vban = $('dev-protocol').value === 'vban', aes67 = $('dev-protocol').value === 'aes67';
  $('dev-net').hidden = !net;
  $('dev-address-label').textContent = kind === 'send' ? 'To' : 'From';
  $('dev-address-note').textContent = kind === 'send' ? 'address:port' : vban ? 'address:port (empty: 0.0.0.0:6980)' : 'address:port (PipeWire 1.x; or a stream name)';
  $('dev-address').placeholder = vban ? (kind === 'send' ? '192.168.1.20:6980' : '0.0.0.0:6980') : kind === 'send' ? '239.69.1.10:5004' : '0.0.0.0:5004';
  $('dev-session-note').textContent = vban ? 'VBAN stream name, at most 15 characters' : kind === 'send' ? 'announced; empty: the device\'s name' : 'the name its sender announces';
  // An AES67 sender takes a latency too (what it gathers before sending); AES67's default is 3 ms.
  $('dev-latency-label').hidden = kind !== 'receive' && !(kind === 'send' && aes67);
  $('dev-latency').placeholder = aes67 ? '3' : '100';
  const stem = ($('dev-name').value.trim() || 'NAME').replace(/[^A-Za-z0-9]/g, '_');
  $('dev-channels').placeholder = 'new: ' + $('dev-position').value.split(',').map((p) => stem + '_' + p).join(', ');
  const status = n['device.status'] || {}, streams = n['device.streams'] || {};
  const key = JSON.stringify([n.devices, status, streams, DV.editing, DV.armed]);
  if (key === DV.key) return;
  DV.key = key;
  const list = $('device-list');
  const devices = devicesOf(n);
  // A rename being typed stays as it is while the node changes (its device still there).
  if (DV.editing && list.querySelector('form.rename') && devices.some((d) => d.name === DV.editing)) return;
  list.replaceChildren(...devices.map((d) => deviceItem(d, status[d.name], streams[d.name] || [])));
  if (!devices.length) list.append(h('li', { class: 'devnone', text: 'No virtual devices yet: add one below.' }));
}

function deviceItem(d, state, streams) {
  const li = h('li', { class: 'devitem', 'data-testid': 'device-' + d.name });
  const feeds = feedsInputs(d.kind);
  const side = feeds ? 'inputs' : 'outputs';
  if (DV.editing === d.name) {
    const form = h('form', { class: 'devform rename', 'data-testid': 'dev-rename-form' });
    const nm = h('input', { type: 'text', value: d.name, maxlength: '48', spellcheck: 'false', 'data-testid': 'dev-rename-name', 'aria-label': 'New name' });
    const ds = h('input', { type: 'text', value: d.description, maxlength: '127', 'data-testid': 'dev-rename-desc', 'aria-label': 'New description' });
    const err = h('div', { class: 'deverr', role: 'alert', 'data-testid': 'dev-rename-error' });
    const cancel = h('button', { type: 'button', text: 'Cancel' });
    form.append(h('label', {}, 'Name', nm), h('label', {}, 'Description', ds),
      h('div', { class: 'row end' }, cancel, h('button', { type: 'submit', 'data-testid': 'dev-rename-save', text: 'Save' })), err);
    cancel.addEventListener('click', () => { DV.editing = null; renderDevices(); });
    form.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') { DV.editing = null; renderDevices(); } });
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const name = nm.value.trim();
      let desc = ds.value.trim();
      const devices = devicesOf(S.node);
      const problem = nameProblem(name, devices.filter((x) => x.name !== d.name).map((x) => x.name));
      if (problem) { err.textContent = problem; nm.focus(); return; }
      // As the command line does: a description that was the name follows it.
      if (!desc || (desc === d.description && d.description === d.name)) desc = name;
      if (name === d.name && desc === d.description) { DV.editing = null; renderDevices(); return; }
      const lines = devices.map((x) => (x.name === d.name ? renamedLine(x.line, name, desc) : x.line));
      err.textContent = '';
      try {
        await setDevices(lines);
        DV.editing = null;
        notice(name === d.name ? 'Described ' + name + ' as ' + desc : 'Renamed ' + d.name + ' to ' + name);
        renderDevices();
      } catch (e) { err.textContent = 'Not renamed: ' + deviceReason(e.message); }
    });
    li.append(form);
    setTimeout(() => { nm.focus(); nm.select(); }, 0);
    return li;
  }
  let say = 'being made…', cls = 'wait';
  if (state) {
    const m = /^waiting \(node (\d+) has this name\)$/.exec(state);
    if (/^ready/.test(state)) { say = 'ready'; cls = 'ok'; }
    else if (m) { say = `not made: node ${m[1]} already has the name ${d.name}; it is made when that node goes (or rename it)`; cls = 'bad'; }
    else if (/^failed/.test(state)) { say = state; cls = 'bad'; }
    else say = state;
  }
  if (streams.length) say += ' · ' + streams.join(', ') + (feeds ? ' playing' : ' recording');
  // A stream over the network: where it goes or what it takes (crosspoint net).
  const f = parseLine(d.line).flags;
  // Where it goes or comes from; AES67 and VBAN named (RTP is the default), and the driver
  // group a stream joins (AES67's: the PTP clock's).
  const proto = f.protocol && f.protocol !== 'rtp' ? f.protocol.toUpperCase() + ' ' : '';
  const group = d.kind === 'send' || d.kind === 'receive' ? (f.group || (f.protocol === 'aes67' ? 'pipewire.ptp0' : '')) : '';
  const wire = (d.kind === 'send' ? ' · ' + proto + 'to ' + (f.to || '?') : d.kind === 'receive' ? ' · ' + proto + 'from ' + (f.from || 'session ' + (f.session || '?')) : '')
    + (group ? ', clock group ' + group : '');
  const rename = h('button', { type: 'button', 'data-testid': 'dev-rename-' + d.name, text: 'Rename', title: 'Rename ' + d.name + ' or change its description (it is made again)' });
  const armed = DV.armed === d.name;
  const remove = h('button', { type: 'button', class: armed ? 'armed' : '', 'data-testid': 'dev-remove-' + d.name,
    text: armed ? 'Remove ' + d.name + '?' : 'Remove',
    title: 'Remove ' + d.name + ': its applications go to the default device; its ' + side + ' stay' });
  li.append(
    h('div', { class: 'devmain' },
      h('div', { class: 'devtitle' }, h('span', { class: 'kind ' + d.kind, text: d.kind }), h('b', { text: d.description }), ' ', h('code', { text: d.name })),
      h('div', { class: 'chans', text: d.positions.join(', ') + (feeds ? ' → inputs ' : ' ← outputs ') + d.channels.join(', ') + wire }),
      h('div', { class: 'state ' + cls, 'data-testid': 'device-state-' + d.name, text: say })),
    h('div', { class: 'acts' }, rename, remove));
  rename.addEventListener('click', () => { DV.editing = d.name; DV.armed = null; $('device-error').textContent = ''; renderDevices(); });
  // Remove asks twice: the first click arms the button for 3 s (as a preset's Delete).
  remove.addEventListener('click', async () => {
    clearTimeout(DV.armTimer);
    if (DV.armed !== d.name) {
      DV.armed = d.name;
      DV.armTimer = setTimeout(() => { DV.armed = null; renderDevices(); }, 3000);
      renderDevices();
      return;
    }
    DV.armed = null;
    const lines = devicesOf(S.node).filter((x) => x.name !== d.name).map((x) => x.line);
    try {
      await setDevices(lines);
      notice('Removed ' + d.name);
    } catch (e) { $('device-error').textContent = 'Not removed: ' + deviceReason(e.message); }
    renderDevices();
  });
  return li;
}

function deviceControls() {
  try { DV.open = localStorage.getItem(LS_DEVICES) === '1'; } catch (e) { /* ignore */ }
  const toggle = (open) => {
    DV.open = open;
    try { localStorage.setItem(LS_DEVICES, open ? '1' : '0'); } catch (e) { /* ignore */ }
    if (open) closeOtherPanels('devices');   // one panel beside the grid at a time
    renderDevices();
    if (open && S.node) $('dev-name').focus();
  };
  $('devices-toggle').addEventListener('click', () => toggle(!DV.open));
  $('devices-close').addEventListener('click', () => { toggle(false); $('devices-toggle').focus(); });
  // Selects say `change` (a keyboard or a script choosing an option may not say `input`).
  for (const id of ['dev-kind', 'dev-position', 'dev-name', 'dev-protocol']) {
    for (const event of ['input', 'change']) $(id).addEventListener(event, () => { DV.key = ''; renderDevices(); });
  }
  const form = $('device-add'), err = $('device-error');
  form.addEventListener('input', () => { err.textContent = ''; });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!S.node) return;
    const kind = $('dev-kind').value, name = $('dev-name').value.trim(), desc = $('dev-desc').value.trim();
    const positions = $('dev-position').value;
    const channels = $('dev-channels').value.split(/[\s,]+/).filter(Boolean);
    const devices = devicesOf(S.node);
    const problem = nameProblem(name, devices.map((d) => d.name));
    if (problem) { err.textContent = problem; err.scrollIntoView({ block: 'nearest' }); $('dev-name').focus(); return; }
    const count = positions.split(',').length;
    if (channels.length && channels.length !== count) {
      err.textContent = `Give one ${feedsInputs(kind) ? 'input' : 'output'} for each of the device's ${count} channels (${positions}), or none for new ones.`;
      $('dev-channels').focus();
      return;
    }
    // A stream's options, as `crosspoint net send|receive` writes them; the node checks them
    // (an address, a name too long for VBAN, a receiver that says not what it takes) and its
    // error is said here.
    let stream = '';
    if (kind === 'send' || kind === 'receive') {
      const address = $('dev-address').value.trim(), session = $('dev-session').value.trim(), latency = $('dev-latency').value.trim();
      stream = ' protocol=' + $('dev-protocol').value + (address ? (kind === 'send' ? ' to=' : ' from=') + address : '')
        + (session ? ' session=' + session : '')
        + ((kind === 'receive' || $('dev-protocol').value === 'aes67') && latency ? ' latency=' + latency : '');
    }
    const line = kind + ' ' + name + ' position=' + positions + (channels.length ? ' channels=' + channels.join(',') : '') + stream
      + (desc ? ' description=' + desc : '');
    err.textContent = '';
    $('dev-add').disabled = true;
    try {
      await setDevices(devices.map((d) => d.line).concat([line]));
      notice('Added ' + name);
      $('dev-name').value = ''; $('dev-desc').value = ''; $('dev-channels').value = '';
      $('dev-address').value = ''; $('dev-session').value = ''; $('dev-latency').value = '';
      DV.key = '';
      renderDevices();
    } catch (e) {
      err.textContent = 'Not added: ' + deviceReason(e.message);
      err.scrollIntoView({ block: 'nearest' });
    } finally {
      $('dev-add').disabled = false;
    }
  });
}

/* ================================================================ 5b'. the ducking panel */

/* The node's ducking rules (README: Ducking), one row each: its trigger and what it lowers, a
 * switch (`duck.on.N`), its depth (`duck.depth.N`: the keys a MIDI knob or an OSC slider moves),
 * and Remove (asked twice); a form adds one. Adding and removing set the `duck` key through the
 * change queue, as `crosspoint duck add/remove` do: the node checks the line (a channel it does
 * not have, a rule lowering its own trigger, a value out of range) and its error is said here. */
const DK = { open: false, key: '', armed: -1, armTimer: 0 };
const LS_DUCK = 'crosspoint.ducking-open';

/** A rule's line as the node writes it: {triggers, lowers, depth, threshold, enabled, text}. */
function duckRule(text) {
  const words = text.split(/\s+/).filter(Boolean);
  const r = { triggers: (words[0] || '').split(','), lowers: [], depth: -12, threshold: -40, enabled: !words.includes('off'), text };
  for (const w of words.slice(1)) {
    const eq = w.indexOf('=');
    if (eq < 0) continue;
    const k = w.slice(0, eq), v = w.slice(eq + 1);
    if (k === 'lowers') r.lowers = v.split(',');
    else if (k === 'depth' || k === 'threshold') r[k] = Number(v);
  }
  return r;
}
/** A lowered channel as a person reads it: in_music_FL, out_FL, music_FL → FL. */
function loweredName(c) {
  if (c.startsWith('out:')) return 'out ' + c.slice(4);
  const m = /^matrix\.([^.]+)\.([^.]+)$/.exec(c);
  return m ? m[1] + ' → ' + m[2] : c;
}
/** The node's error without the rule it quotes (`duck: rule 2 'mic lowers=...': `): the reason,
 * with its rule: `Not added: lowers its own trigger mic`. */
function duckReason(message) {
  return message.replace(/^(duck: )?rule \d+ '[^]*?'(: | (?=lowers|names))/, '').replace(/^duck: /, '');
}

function toggleDucking(open) {
  DK.open = open;
  try { localStorage.setItem(LS_DUCK, open ? '1' : '0'); } catch (e) { /* ignore */ }
  if (open) closeOtherPanels('ducking');
  DK.key = '';
  renderDucking();
  if (open && S.node) $('duck-trigger').focus();
}

function renderDucking() {
  const n = S.node;
  const rules = n ? (n.duck || []) : [];
  const t = $('duck-toggle');
  t.disabled = !n;
  $('duck-count').textContent = n ? String(rules.length) : '';
  t.setAttribute('aria-expanded', String(DK.open && !!n));
  const panel = $('ducking');
  const show = DK.open && !!n;
  if (panel.hidden === show) panel.hidden = !show;
  if (!show) return;
  const key = JSON.stringify([rules, n['input.position'], DK.armed]);
  if (key === DK.key) return;
  // A depth being typed stays as it is while the node changes.
  if (document.activeElement && document.activeElement.classList.contains('duckdepth') && DK.key) return;
  DK.key = key;
  $('duck-inputs').replaceChildren(...(n['input.position'] || []).map((name) => h('option', { value: name })));
  const list = $('duck-list');
  list.replaceChildren(...rules.map((text, r) => duckItem(duckRule(text), r)));
  if (!rules.length) list.append(h('li', { class: 'devnone', text: 'No ducking rules yet: add one below.' }));
}

function duckItem(rule, r) {
  const li = h('li', { class: 'devitem' + (rule.enabled ? '' : ' off'), 'data-testid': 'duck-rule-' + r });
  const on = h('input', { type: 'checkbox', 'data-testid': 'duck-on-' + r, 'aria-label': 'Rule ' + r + ' on',
    title: 'Rule ' + r + ' applies (duck.on.' + r + '); off keeps it without lowering anything' });
  on.checked = rule.enabled;
  const depth = h('input', { type: 'number', class: 'duckdepth', min: '-60', max: '0', step: '1', value: String(rule.depth),
    'data-testid': 'duck-depth-' + r, 'aria-label': 'Rule ' + r + ' depth in dB', title: 'How far it lowers, -60 to 0 dB (duck.depth.' + r + ')' });
  const armed = DK.armed === r;
  const remove = h('button', { type: 'button', class: armed ? 'armed' : '', 'data-testid': 'duck-remove-' + r,
    text: armed ? 'Remove?' : 'Remove', title: 'Remove rule ' + r + ': what it lowers comes back up' });
  const err = h('div', { class: 'deverr', role: 'alert', 'data-testid': 'duck-rule-error-' + r });
  li.append(
    h('div', { class: 'devmain' },
      h('div', { class: 'devtitle' }, h('span', { class: 'kind duck', text: String(r) }), h('b', { text: rule.triggers.join(', ') }), ' lowers'),
      h('div', { class: 'chans', text: rule.lowers.map(loweredName).join(', ') }),
      h('div', { class: 'row duckrow' }, h('label', {}, on, ' on'), h('label', {}, depth, ' dB'),
        h('span', { class: 'sub', text: 'above ' + rule.threshold + ' dBFS' })),
      err),
    h('div', { class: 'acts' }, remove));
  on.addEventListener('change', async () => {
    err.textContent = '';
    try { await Q.put('duck.on.' + r, on.checked, true); notice('Rule ' + r + (on.checked ? ' on' : ' off')); }
    catch (e) { err.textContent = 'Not switched: ' + duckReason(e.message); }
    DK.key = ''; renderDucking();
  });
  depth.addEventListener('change', async () => {
    const v = Number(depth.value);
    if (depth.value.trim() === '' || !Number.isFinite(v) || v < -60 || v > 0) { err.textContent = 'The depth is a level from -60 to 0 dB.'; return; }
    err.textContent = '';
    try { await Q.put('duck.depth.' + r, v, true); notice('Rule ' + r + ' lowers by ' + v + ' dB'); }
    catch (e) { err.textContent = 'Not changed: ' + duckReason(e.message); }
    depth.blur();
    DK.key = ''; renderDucking();
  });
  // Remove asks twice: the first click arms the button for 3 s (as a device's Remove).
  remove.addEventListener('click', async () => {
    clearTimeout(DK.armTimer);
    if (DK.armed !== r) {
      DK.armed = r;
      DK.armTimer = setTimeout(() => { DK.armed = -1; renderDucking(); }, 3000);
      renderDucking();
      return;
    }
    DK.armed = -1;
    const lines = (S.node.duck || []).filter((_, k) => k !== r);
    try { await Q.put('duck', lines, true); notice('Removed rule ' + r); }
    catch (e) { err.textContent = 'Not removed: ' + duckReason(e.message); }
    DK.key = ''; renderDucking();
  });
  return li;
}

function duckControls() {
  try { DK.open = localStorage.getItem(LS_DUCK) === '1'; } catch (e) { /* ignore */ }
  if (DK.open) closeOtherPanels('ducking');
  $('duck-toggle').addEventListener('click', () => toggleDucking(!DK.open));
  $('ducking-close').addEventListener('click', () => { toggleDucking(false); $('duck-toggle').focus(); });
  const form = $('duck-add'), err = $('duck-error');
  form.addEventListener('input', () => { err.textContent = ''; });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!S.node) return;
    const list = (id) => $(id).value.split(/[\s,]+/).filter(Boolean).join(',');
    const trigger = list('duck-trigger'), lowers = list('duck-lowers');
    if (!trigger) { err.textContent = 'Name the trigger: the inputs whose level lowers the others, e.g. mic.'; $('duck-trigger').focus(); return; }
    if (!lowers) { err.textContent = 'Name what it lowers: inputs, out:OUTPUT or matrix.IN.OUT, comma-separated.'; $('duck-lowers').focus(); return; }
    const words = [trigger, 'lowers=' + lowers];
    for (const [id, option] of [['duck-depth', 'depth'], ['duck-threshold', 'threshold'], ['duck-attack', 'attack'], ['duck-hold', 'hold'], ['duck-release', 'release']]) {
      const v = $(id).value.trim();
      if (v) words.push(option + '=' + v);
    }
    err.textContent = '';
    $('duck-add-button').disabled = true;
    try {
      await Q.put('duck', (S.node.duck || []).concat([words.join(' ')]), true);
      notice('Added a rule on ' + trigger);
      $('duck-trigger').value = ''; $('duck-lowers').value = '';
      DK.key = '';
      renderDucking();
    } catch (e) {
      err.textContent = 'Not added: ' + duckReason(e.message);
      err.scrollIntoView({ block: 'nearest' });
    } finally {
      $('duck-add-button').disabled = false;
    }
  });
  renderDucking();
}

/** One panel beside the grid at a time: closes the others than `open`. */
function closeOtherPanels(open) {
  for (const [name, panel, stored, render] of [['devices', DV, LS_DEVICES, renderDevices], ['ducking', DK, LS_DUCK, renderDucking]]) {
    if (name === open || !panel.open) continue;
    panel.open = false;
    try { localStorage.setItem(stored, '0'); } catch (e) { /* ignore */ }
    render();
  }
  if (open !== 'apps' && AP.open) toggleApps(false);
}

/* ================================================================ 5c. the apps panel */

/* The applications' streams (README: apps, move), as the server pushes them (`apps` messages:
 * `crosspoint apps --json`'s list, the sinks and sources, the defaults; sent again whenever the
 * graph changes): one row per stream, with where it plays or records now, a picker of the devices
 * of its kind (sinks for playback, sources for recording) and "Default device (follows)", and
 * whether it is pinned or follows the default. Choosing moves it through POST api/apps/move, as
 * `crosspoint move` does (the server waits for the session manager to relink it); an error is
 * said on the stream's row, in the command's words, and the picker goes back to the truth. */
const AP = { open: false, data: null, key: '', busy: new Map(), errors: new Map() };
const LS_APPS = 'crosspoint.apps-open';

/** Where a stream is now: `Game (game) → desk inputs game_FL, game_FR`, joined; or not linked. */
function appPlaces(a) {
  if (!a.plays || !a.plays.length) return a.kind === 'playback' ? 'not playing anywhere (not linked)' : 'not recording from anything (not linked)';
  const side = a.kind === 'playback' ? 'inputs' : 'outputs';
  return (a.kind === 'playback' ? 'on ' : 'from ') + a.plays.map((p) => {
    let t = p.description && p.description !== p.name ? p.description + ' (' + p.name + ')' : p.name;
    if (p.mixer && p.mixer.node !== p.name) t += (a.kind === 'playback' ? ' → ' : ' ← ') + p.mixer.node;
    if (p.mixer && p.mixer.inputs.length) t += ' ' + side + ' ' + p.mixer.inputs.join(', ');
    return t;
  }).join('; ');
}
/** The devices a stream can go to, and what its picker shows now ('default' when it follows). */
function appChoices(a) {
  const d = AP.data || {};
  return { devices: (a.kind === 'playback' ? d.sinks : d.sources) || [], def: a.kind === 'playback' ? d.defaultSink : d.defaultSource };
}
function deviceLabel(dev) { return dev.description && dev.description !== dev.name ? dev.description + ' (' + dev.name + ')' : dev.name; }

function renderApps() {
  const d = AP.data;
  // Playing first, then recording; each by id.
  const apps = ((d && d.apps) || []).slice().sort((x, y) => (x.kind === y.kind ? x.id - y.id : x.kind === 'playback' ? -1 : 1));
  $('apps-count').textContent = d ? String(apps.length) : '';
  $('apps-toggle').setAttribute('aria-expanded', String(AP.open));
  const panel = $('apps');
  if (panel.hidden === AP.open) panel.hidden = !AP.open;
  if (!AP.open) return;
  const key = JSON.stringify([d, [...AP.busy], [...AP.errors]]);
  if (key === AP.key) return;
  AP.key = key;
  const list = $('app-list');
  // The picker in use keeps the focus across a new list (the graph changed meanwhile).
  const focused = document.activeElement && list.contains(document.activeElement) ? document.activeElement.dataset.testid : null;
  list.replaceChildren(...apps.map(appItem));
  if (!d) list.append(h('li', { class: 'devnone', text: S.wsUp ? 'Reading the applications…' : 'Connecting…' }));
  else if (!apps.length) list.append(h('li', { class: 'devnone', text: 'No application is playing or recording.' }));
  if (focused) { const e = list.querySelector(`[data-testid="${focused}"]`); if (e) e.focus({ preventScroll: true }); }
  // The error of a stream that has gone since (it ended, or its move failed because it did) stays, under the list.
  const gone = [...AP.errors].filter(([id]) => !apps.some((a) => a.id === id)).map(([, m]) => m);
  if (gone.length) $('apps-error').textContent = gone.join(' ');
  for (const id of AP.errors.keys()) if (!apps.some((a) => a.id === id)) AP.errors.delete(id);
}

function appItem(a) {
  const li = h('li', { class: 'devitem appitem', 'data-testid': 'app-' + a.id });
  const playing = a.kind === 'playback';
  const { devices, def } = appChoices(a);
  const busy = AP.busy.get(a.id);
  const sel = h('select', { 'data-testid': 'app-target-' + a.id, 'aria-label': (playing ? 'Where ' + a.app + ' plays' : 'Where ' + a.app + ' records from'),
    title: playing ? 'Move it to another sink, or give it back to the default device' : 'Move it to another source, or give it back to the default device' });
  const defDev = devices.find((x) => x.name === def);
  sel.append(h('option', { value: 'default', text: 'Default device (follows)' + (defDev ? ' · ' + defDev.description : '') }));
  for (const dev of devices) sel.append(h('option', { value: dev.name, text: deviceLabel(dev) }));
  const pinned = a.followsDefault ? null : a.pinnedTo;
  if (pinned && !devices.some((x) => x.name === pinned)) sel.append(h('option', { value: pinned, text: pinned + ' (not there now)' }));
  sel.value = busy ? busy : (pinned || 'default');
  sel.disabled = !!busy;
  sel.addEventListener('change', () => moveApp(a, sel.value));
  const pin = h('span', { class: 'pin ' + (a.followsDefault ? 'follows' : 'pinned'), 'data-testid': 'app-pin-' + a.id,
    text: busy ? 'moving…' : a.followsDefault ? 'follows default' : 'pinned',
    title: a.followsDefault ? 'It goes wherever the default ' + (playing ? 'sink' : 'source') + ' is' + (def ? ' (now ' + def + ')' : '')
      : 'It stays on ' + pinned + ' (moved there, asked for by the application, or remembered for it)' });
  const facts = ['id ' + a.id];
  if (a.pid != null) facts.push('pid ' + a.pid);
  if (a.node !== a.app) facts.push('stream ' + a.node);
  if (a.role) facts.push(a.role);
  // What it plays (a title, a file): on a line of its own, cut at the panel's edge (a file by its name), whole in the tooltip.
  const media = a.media ? h('div', { class: 'media', title: a.media, text: a.media.replace(/^\/.*\//, '') }) : '';
  li.append(h('div', { class: 'devmain' },
    h('div', { class: 'devtitle' }, h('span', { class: 'kind ' + (playing ? 'sink' : 'source'), text: playing ? 'plays' : 'records' }),
      h('b', { text: a.app })),
    h('div', { class: 'chans', text: facts.join(' · ') }),
    media,
    h('div', { class: 'state ' + (a.plays && a.plays.length ? 'ok' : 'wait'), 'data-testid': 'app-where-' + a.id, text: appPlaces(a) }),
    h('div', { class: 'approw' }, sel, pin),
    h('div', { class: 'deverr', role: 'alert', 'data-testid': 'app-error-' + a.id, text: AP.errors.get(a.id) || '' })));
  return li;
}

async function moveApp(a, to) {
  const dev = appChoices(a).devices.find((x) => x.name === to);
  // A device named like a word `move` reads as the default is sent by its id.
  const word = dev && (to === 'default' || /^@DEFAULT_/.test(to)) ? String(dev.id) : to;
  AP.busy.set(a.id, to);
  AP.errors.delete(a.id);
  $('apps-error').textContent = '';
  renderApps();
  try {
    const r = await api('api/apps/move', 'POST', { app: String(a.id), to: word });
    notice((r && r.said && r.said[0]) || 'Moved ' + a.app);
  } catch (e) {
    AP.errors.set(a.id, (to === 'default' ? 'Not given back to the default device: ' : 'Not moved to ' + to + ': ') + e.message);
  } finally {
    AP.busy.delete(a.id);
    AP.key = '';
    renderApps();
  }
}

function toggleApps(open) {
  AP.open = open;
  try { localStorage.setItem(LS_APPS, open ? '1' : '0'); } catch (e) { /* ignore */ }
  if (open) closeOtherPanels('apps');   // one panel beside the grid at a time
  AP.key = '';
  renderApps();
}

function appControls() {
  try { AP.open = localStorage.getItem(LS_APPS) === '1'; } catch (e) { /* ignore */ }
  if (AP.open) DV.open = false;
  $('apps-toggle').addEventListener('click', () => toggleApps(!AP.open));
  $('apps-close').addEventListener('click', () => { toggleApps(false); $('apps-toggle').focus(); });
  renderApps();
}

/* ================================================================ 6. gestures and the editor */

function targetOf(el) {
  const v = el.dataset.v;
  if (v === 'cell') return { t: 'cell', i: el._i, j: el._j };
  if (v === 'in') return { t: 'in', i: el._i };
  if (v === 'out') return { t: 'out', j: el._j };
  if (v === 'master') return { t: 'master' };
  return null;
}
function sameTarget(a, b) { return a && b && a.t === b.t && a.i === b.i && a.j === b.j; }

function setGain(tg, g) {
  if (!S.node) return;
  if (gainOf(tg) === g) return;
  change(keyOf(tg), g);
}
function toggleMute(tg) {
  if (!S.node) return;
  change(muteKeyOf(tg), !muteOf(tg));
}
function toggleCell(tg) {
  setGain(tg, gainOf(tg) === 0 ? 1 : 0);
}
function nudge(tg, steps) { setGain(tg, stepGain(gainOf(tg), steps)); }

const readout = { el: null, show(anchor, g) {
  const r = anchor.getBoundingClientRect();
  const e = this.el || (this.el = $('readout'));
  e.textContent = g === 0 ? 'off' : fmtGain(g) + ' dB';
  e.style.left = (r.left + r.width / 2) + 'px';
  e.style.top = (r.top - 6) + 'px';
  e.hidden = false;
}, hide() { if (this.el) this.el.hidden = true; } };

let drag = null;      // {tg, el, id, x, y, g0, moved}
let lastTap = null;   // {tg, t, before}: the last tap, and a cell's gain before it toggled

function onPointerDown(ev) {
  if (ev.button !== 0 || !S.node) return;
  const el = ev.target.closest('[data-v]');
  if (!el) return;
  const tg = targetOf(el);
  if (!tg) return;
  if (L.on) { ev.preventDefault(); learn(keyOf(tg), el); return; }
  if (tg.t !== 'master') { setCursor(tg.t === 'cell' ? tg : { t: tg.t, i: tg.i, j: tg.j }, false); G.vp.focus({ preventScroll: true }); }
  drag = { tg, el, id: ev.pointerId, x: ev.clientX, y: ev.clientY, g0: gainOf(tg), moved: false, type: ev.pointerType };
  try { el.setPointerCapture(ev.pointerId); } catch (e) { /* ignore */ }
  if (ev.pointerType === 'mouse') ev.preventDefault();   // no text selection; focus stays on the grid
}
function onPointerMove(ev) {
  if (!drag || ev.pointerId !== drag.id) return;
  const dy = ev.clientY - drag.y;
  if (!drag.moved) {
    if (Math.abs(dy) < (drag.type === 'mouse' ? 3 : 6)) return;
    drag.moved = true;
    drag.y = ev.clientY;  // start counting from here: no jump
    lastTap = null;  // a drag is no tap: the next click is a click of its own
    return;
  }
  const px = ev.shiftKey ? 14 : 4;
  const steps = Math.trunc(-(ev.clientY - drag.y) / px);
  const g = stepGain(drag.g0, steps);
  setGain(drag.tg, g);
  readout.show(drag.el, g);
}
function onPointerUp(ev) {
  if (!drag || ev.pointerId !== drag.id) return;
  const d = drag;
  drag = null;
  readout.hide();
  if (ev.type === 'pointercancel' || d.moved) return;
  tap(d.tg, d.el);
}
/** A click / tap on a cell toggles it at once (a click must reach the node within 50 ms, so
 *  it does not wait to see whether a second click follows). A second tap on the same target
 *  within DBL_MS is a double-click: it puts the cell back as it was before the first (so
 *  a double-click leaves the cross-point where it was, after a blip of at most DBL_MS) and
 *  opens the editor on that value. */
function tap(tg, el) {
  const now = performance.now();
  if (lastTap && sameTarget(lastTap.tg, tg) && now - lastTap.t < DBL_MS) {
    const before = lastTap.before;
    lastTap = null;
    if (before !== undefined && gainOf(tg) !== before) setGain(tg, before);
    openEditor(tg, el);
    return;
  }
  const entry = { tg, t: now, before: undefined };
  if (tg.t === 'cell') { entry.before = gainOf(tg); toggleCell(tg); }
  lastTap = entry;
}

let wheelAcc = 0, wheelTarget = null;
function onWheel(ev) {
  const el = ev.target.closest('[data-v]');
  if (!el || !S.node) return;
  if (Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) return;        // sideways: let it scroll
  const tg = targetOf(el);
  ev.preventDefault();
  if (!sameTarget(tg, wheelTarget)) { wheelTarget = tg; wheelAcc = 0; }
  const unit = ev.deltaMode === 1 ? 3 : ev.deltaMode === 2 ? 100 : 1;   // lines / pages -> ~px
  wheelAcc += ev.deltaY * (ev.deltaMode === 0 ? 1 : unit * 16);
  const per = ev.shiftKey ? 120 : 40;
  let steps = 0;
  while (wheelAcc <= -per) { steps++; wheelAcc += per; }
  while (wheelAcc >= per) { steps--; wheelAcc -= per; }
  if (!steps && Math.abs(ev.deltaY) >= 1 && ev.deltaMode !== 0) steps = ev.deltaY < 0 ? 1 : -1;
  if (steps) {
    nudge(tg, steps);
    readout.show(el, gainOf(tg));
    clearTimeout(onWheel.t);
    onWheel.t = setTimeout(() => readout.hide(), 700);
  }
}

/* MIDI learn (nodes with MIDI ports): the Learn button arms it; a click on a gain, a
 * cross-point, a mute or the ramp then asks the node to map the next control that moves on its midi_in
 * to that key (POST api/nodes/ID/learn); the mapping arrives in the node's midi.map. */
const L = { on: false, key: null, known: [], el: null };

function setLearn(on) {
  if (!on && L.key && S.nodeId != null) api('api/nodes/' + S.nodeId + '/learn', 'POST', { key: null }).catch(() => {});
  L.on = on;
  L.key = null;
  if (L.el) L.el.classList.remove('learn-target');
  L.el = null;
  $('notice').textContent = on ? 'MIDI learn: click a gain, a cross-point or a mute' : '';
  renderMidi();
}

async function learn(key, el) {
  if (!S.node) return;
  if (L.el) L.el.classList.remove('learn-target');
  L.key = key;
  L.known = (S.node['midi.map'] || []).slice();
  L.el = el || null;
  if (L.el) L.el.classList.add('learn-target');
  clearTimeout(noticeTimer);
  $('notice').textContent = 'Move a control on your MIDI controller for ' + key + '…';
  renderMidi();
  try {
    await api('api/nodes/' + S.nodeId + '/learn', 'POST', { key });
  } catch (e) {
    toast(e.message);
    setLearn(false);
  }
}

function renderMidi() {
  const n = S.node;
  const has = !!(n && n.midi);
  const group = $('midi-group');
  if (group.hidden === has) group.hidden = !has;
  if (!has && L.on) { L.on = false; L.key = null; }
  const b = $('midi-learn');
  b.setAttribute('aria-pressed', String(L.on));
  const label = L.key ? 'Learning…' : 'Learn';
  if (b.textContent !== label) b.textContent = label;
  document.body.classList.toggle('learning', L.on);
  if (L.key && n && Array.isArray(n['midi.map'])) {
    const learned = n['midi.map'].find((m) => !L.known.includes(m) && m.split(' ').includes(L.key));
    if (learned) {
      setLearn(false);
      notice('Learned: ' + learned);
    }
  }
}

/* the inline editor: one floating text field for gains and channel names */
const ED = { el: null, input: null, err: null, tg: null, busy: false, inGrid: false };

function anchorFor(tg) {
  if (tg.t === 'master') return $('master-gain');
  if (tg.t === 'cell') return G.cells.get(tg.i * 65536 + tg.j);
  if (tg.t === 'in') return (G.rows.get(tg.i) || {})._gain;
  if (tg.t === 'out') return (G.cols.get(tg.j) || {})._gain;
  if (tg.t === 'name') return ((tg.side === 'in' ? G.rows : G.cols).get(tg.i) || {})._name;
  return null;
}
function openEditor(tg, anchor) {
  if (!S.node) return;
  closeEditor();
  anchor = anchor || anchorFor(tg);
  if (!anchor) return;
  const r = anchor.getBoundingClientRect();
  const form = h('form', { class: 'editor' });
  const input = h('input', { type: 'text', spellcheck: 'false', autocomplete: 'off', 'data-testid': 'editor' });
  const err = h('div', { class: 'err', role: 'alert' });
  form.append(input, err);
  const w = Math.max(r.width, tg.t === 'name' ? 120 : 104);
  form.style.left = Math.max(4, Math.min(r.left, innerWidth - w - 4)) + 'px';
  form.style.top = Math.max(4, r.top + r.height / 2 - 17) + 'px';
  form.style.width = w + 'px';
  if (tg.t === 'name') {
    input.value = S.node[tg.side === 'in' ? 'input.position' : 'output.position'][tg.i];
    input.setAttribute('aria-label', 'Channel name');
  } else if (tg.t === 'delay') {
    input.value = fmtMs(delayOf(tg.j));
    input.setAttribute('aria-label', 'Delay in milliseconds: 12ms, 0 for none');
    input.placeholder = '12ms';
  } else {
    input.value = editText(gainOf(tg));
    input.setAttribute('aria-label', 'Gain: -6dB, 0.5, -inf or 2x');
    input.placeholder = '-6dB';
  }
  Object.assign(ED, { el: form, input, err, tg, busy: false, inGrid: tg.t !== 'master' });
  document.body.append(form);
  input.focus();
  input.select();
  form.addEventListener('submit', (e) => { e.preventDefault(); submitEditor(); });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); closeEditor(true); }
    else e.stopPropagation();
  });
  input.addEventListener('input', () => { err.textContent = ''; });
  input.addEventListener('blur', () => { setTimeout(() => { if (ED.el === form && !ED.busy && document.activeElement !== input) closeEditor(); }, 0); });
}
function closeEditor(refocus) {
  if (!ED.el) return;
  const wasGrid = ED.inGrid, tg = ED.tg;
  ED.el.remove();
  ED.el = null; ED.tg = null;
  if (refocus) {
    if (wasGrid) G.vp.focus({ preventScroll: true });
    else if (tg && tg.t === 'master') $('master-gain').focus();
  }
}
function submitEditor() {
  const { tg, input, err } = ED;
  if (!tg || ED.busy) return;
  const text = input.value.trim();
  if (!text) { closeEditor(true); return; }
  let key, val;
  if (tg.t === 'name') {
    key = tg.side === 'in' ? 'input.position' : 'output.position';
    const list = S.node[key].slice();
    if (list[tg.i] === text) { closeEditor(true); return; }
    list[tg.i] = text;
    val = list;
  } else if (tg.t === 'delay') {
    key = 'delay.out.' + tg.j;
    val = text;                       // as typed (12, 12ms): the server reads it like the command line
    S.local.delete(key);
  } else {
    key = keyOf(tg);
    val = text;                       // as typed: the server reads it like the command line
    S.local.delete(key);
  }
  ED.busy = true;
  input.readOnly = true;
  const form = ED.el;
  Q.put(key, val, true).then(() => {
    if (ED.el === form) closeEditor(true);
  }, (e) => {
    if (ED.el !== form) { toast(e.message); return; }
    ED.busy = false;
    input.readOnly = false;
    err.textContent = e.message;
    toast(e.message);
    input.focus();
    input.select();
  });
}

/* ================================================================ 7. meters */

const M = {
  in: null, out: null,     // per side: {pk, rm (targets, dB), dpk, drm (shown), hold, holdT, clipT, raw}
  last: 0,
  lastLevels: 0,
};
function sideArrays(n) {
  const f = (v) => new Float32Array(n).fill(v);
  return { pk: f(-Infinity), rm: f(-Infinity), dpk: f(-Infinity), drm: f(-Infinity), hold: f(-Infinity), holdT: new Float64Array(n), clipT: new Float64Array(n), raw: new Array(n).fill('') };
}
function resetMeters() { M.in = sideArrays(0); M.out = sideArrays(0); }
function resizeMeters() {
  if (!M.in || M.in.pk.length !== G.ni) M.in = sideArrays(G.ni);
  if (!M.out || M.out.pk.length !== G.no) M.out = sideArrays(G.no);
}
function takeLevels(A, list, now) {
  if (!Array.isArray(list)) return;
  const n = Math.min(list.length, A.pk.length);
  for (let i = 0; i < n; i++) {
    const v = list[i];
    let pk = -Infinity, rm = -Infinity;
    if (v && typeof v[0] === 'number') { pk = v[0]; rm = typeof v[1] === 'number' ? v[1] : -Infinity; A.raw[i] = String(pk); } else A.raw[i] = '';
    A.pk[i] = pk; A.rm[i] = rm;
    if (pk >= A.hold[i] || now > A.holdT[i]) { A.hold[i] = pk; A.holdT[i] = now + 1500; }
    if (pk >= 0) A.clipT[i] = now + 2000;
  }
}
function onLevels(m) {
  if (!M.in) return;
  const now = performance.now();
  takeLevels(M.in, m.inputs, now);
  takeLevels(M.out, m.outputs, now);
  takeDucking(m.duck || []);
  M.lastLevels = now;
}

/* Ducking: each rule's reduction (dB) arrives with the levels; a strip shows the deepest of the
   rules that lower it (the node's `duck` lines name them: lowers=IN,out:OUT). */
function duckTargets() {
  const n = S.node, rules = (n && n.duck) || [];
  if (M.duckKey === rules && M.duckTargets) return M.duckTargets;
  const ins = n['input.position'] || [], outs = n['output.position'] || [];
  M.duckKey = rules;
  M.duckTargets = rules.map((text) => {
    const t = { ins: [], outs: [] };
    const m = / lowers=(\S+)/.exec(' ' + text);
    if (m) for (const c of m[1].split(',')) {
      if (c.startsWith('out:')) { const j = outs.indexOf(c.slice(4)); if (j >= 0) t.outs.push(j); }
      else { const i = ins.indexOf(c); if (i >= 0) t.ins.push(i); }
    }
    return t;
  });
  return M.duckTargets;
}
function takeDucking(duck) {
  const targets = duckTargets();
  const inGR = new Map(), outGR = new Map();
  duck.forEach((db, r) => {
    const t = targets[r];
    if (!t || typeof db !== 'number') return;
    for (const i of t.ins) inGR.set(i, Math.min(inGR.get(i) ?? 0, db));
    for (const j of t.outs) outGR.set(j, Math.min(outGR.get(j) ?? 0, db));
  });
  showGR(G.rows, inGR);
  showGR(G.cols, outGR);
}
function showGR(strips, gr) {
  for (const e of strips.values()) {
    if (!e._gr) continue;
    const db = gr.get(e._i) ?? 0;
    const text = db <= -0.05 ? db.toFixed(1) : '';
    if (text !== e._grText) {
      e._grText = text;
      e._gr.textContent = text;
      e._gr.classList.toggle('on', text !== '');
    }
  }
}
const frac = (db) => (db <= FLOOR_DB ? 0 : db >= 0 ? 1 : (db - FLOOR_DB) / -FLOOR_DB);

function initMeterCache(e) { e._fp = -1; e._fr = -1; e._fh = -1; e._clipOn = false; e._peak = null; }

function meterFrame(now) {
  requestAnimationFrame(meterFrame);
  const t0 = performance.now();
  const dt = Math.min(0.1, (now - (M.last || now)) / 1000);
  M.last = now;
  if (!S.node || !M.in) return;
  // ballistics for every channel (cheap arrays), DOM only for strips on screen
  for (const A of [M.in, M.out]) {
    const n = A.pk.length;
    for (let i = 0; i < n; i++) {
      const pk = A.pk[i], d = A.dpk[i];
      A.dpk[i] = pk >= d ? pk : Math.max(pk, d - 26 * dt);      // fast up, 26 dB/s down
      const r = A.rm[i], dr = A.drm[i];
      A.drm[i] = r >= dr ? dr + (r - dr) * Math.min(1, dt * 25) : Math.max(r, dr - 20 * dt);
      if (!isFinite(A.drm[i]) || A.drm[i] < -200) A.drm[i] = r;
      if (now > A.holdT[i]) A.hold[i] = Math.max(A.dpk[i], A.hold[i] - 30 * dt);
    }
  }
  drawMeters(G.rows, M.in, now, 'scaleX', 'translateX', 1);
  drawMeters(G.cols, M.out, now, 'scaleY', 'translateY', -1);
  const st = window.crosspointStats;
  st.framesMeters++;
  st.meterFrameMs = Math.round((st.meterFrameMs * 0.95 + (performance.now() - t0) * 0.05) * 1000) / 1000;
}
function drawMeters(strips, A, now, scale, translate, dir) {
  for (const e of strips.values()) {
    const i = e._i;
    if (i >= A.pk.length) continue;
    const fp = Math.round(frac(A.dpk[i]) * 500) / 500;
    const fr = Math.round(frac(A.drm[i]) * 500) / 500;
    const fh = Math.round(frac(A.hold[i]) * 500) / 500;
    const me = e._me;
    if (fp !== e._fp) { e._fp = fp; me.pkc.style.transform = `${scale}(${1 - fp})`; }
    if (fr !== e._fr) { e._fr = fr; me.rmc.style.transform = `${scale}(${1 - fr})`; }
    if (fh !== e._fh) {
      e._fh = fh;
      me.hold.style.opacity = fh > 0 ? '1' : '0';
      me.hold.style.transform = `${translate}(${dir * (fh - 1) * 100}%)`;
    }
    const clip = now < A.clipT[i];
    if (clip !== e._clipOn) { e._clipOn = clip; e._clip.classList.toggle('on', clip); }
    const raw = A.raw[i];
    if (raw !== e._peak) { e._peak = raw; me.m.setAttribute('data-peak', raw); }
  }
}
function clearClip(e) {
  const A = e._side === 'in' ? M.in : M.out;
  if (A && e._i < A.clipT.length) A.clipT[e._i] = 0;
}

/* ================================================================ 8. keyboard */

function curElement(c) {
  if (c.t === 'cell') return G.cells.get(c.i * 65536 + c.j);
  if (c.t === 'in') return G.rows.get(c.i);
  if (c.t === 'out') return G.cols.get(c.j);
  return null;
}
function markCursor() {
  const e = curElement(G.cur);
  if (G.curEl && G.curEl !== e) G.curEl.classList.remove('cur');
  if (e) { e.classList.add('cur'); G.vp.setAttribute('aria-activedescendant', e.id); }
  else G.vp.removeAttribute('aria-activedescendant');
  G.curEl = e || null;
  markHoverFor(G.cur, 'kb');
}
function setCursor(c, scroll = true) {
  G.cur = { t: c.t, i: c.i, j: c.j };
  if (scroll) scrollToCursor();
  markCursor();
}
/** Scrolls so the cursor is visible (not under the sticky heads). */
function scrollToCursor() {
  const c = G.cur, vp = G.vp;
  if (c.t !== 'out') {
    const y = c.i * G.rh, top = vp.scrollTop, visH = vp.clientHeight - G.ch;
    if (y < top) vp.scrollTop = y;
    else if (y + G.rh > top + visH) vp.scrollTop = y + G.rh - visH;
  }
  if (c.t !== 'in') {
    const x = c.j * G.cw, left = vp.scrollLeft, visW = vp.clientWidth - G.rw;
    if (x < left) vp.scrollLeft = x;
    else if (x + G.cw > left + visW) vp.scrollLeft = x + G.cw - visW;
  }
  updateVirtual();
}
function moveCursor(dx, dy) {
  const c = { ...G.cur };
  if (c.t === 'cell') {
    c.i += dy; c.j += dx;
    if (c.j < 0) { c.t = 'in'; c.j = undefined; }
    else if (c.i < 0) { c.t = 'out'; c.i = undefined; }
    c.i = c.i === undefined ? undefined : Math.min(G.ni - 1, c.i);
    if (c.j !== undefined) c.j = Math.min(G.no - 1, c.j);
  } else if (c.t === 'in') {
    if (dx > 0) { c.t = 'cell'; c.j = Math.min(G.no - 1, Math.ceil(G.vp.scrollLeft / G.cw)); }  // first visible column
    c.i = Math.max(0, Math.min(G.ni - 1, c.i + dy));
  } else if (c.t === 'out') {
    if (dy > 0) { c.t = 'cell'; c.i = Math.min(G.ni - 1, Math.ceil(G.vp.scrollTop / G.rh)); }  // first visible row
    c.j = Math.max(0, Math.min(G.no - 1, c.j + dx));
  }
  setCursor(c);
}
function onGridKey(ev) {
  if (!S.node || ev.target !== G.vp || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const c = G.cur;
  const tg = c.t === 'cell' ? { t: 'cell', i: c.i, j: c.j } : c.t === 'in' ? { t: 'in', i: c.i } : { t: 'out', j: c.j };
  let done = true;
  switch (ev.key) {
    case 'ArrowLeft': moveCursor(-1, 0); break;
    case 'ArrowRight': moveCursor(1, 0); break;
    case 'ArrowUp': moveCursor(0, -1); break;
    case 'ArrowDown': moveCursor(0, 1); break;
    case 'Home': setCursor({ t: c.t === 'out' ? 'out' : c.t === 'in' ? 'in' : 'cell', i: c.t === 'out' ? undefined : c.i, j: c.t === 'in' ? undefined : 0 }); break;
    case '+': case '=': scrollToCursor(); nudge(tg, 1); break;
    case '-': case '_': scrollToCursor(); nudge(tg, -1); break;
    case '0': scrollToCursor(); setGain(tg, 1); break;
    case 'Delete': case 'Backspace': scrollToCursor(); setGain(tg, 0); break;
    case ' ': if (tg.t === 'cell') toggleCell(tg); else toggleMute(tg); break;
    case 'm': case 'M': toggleMute(tg); break;
    case 'Enter': case 'F2': scrollToCursor(); openEditor(tg); break;
    case 'n': case 'N':
      if (tg.t !== 'cell') { scrollToCursor(); openEditor({ t: 'name', side: tg.t, i: tg.t === 'in' ? tg.i : tg.j }); }
      break;
    default: done = false;
  }
  if (done) ev.preventDefault();
}
function onMasterKey(ev) {
  const tg = { t: 'master' };
  if (!S.node || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  let done = true;
  switch (ev.key) {
    case '+': case '=': case 'ArrowUp': nudge(tg, 1); break;
    case '-': case '_': case 'ArrowDown': nudge(tg, -1); break;
    case '0': setGain(tg, 1); break;
    case 'Delete': case 'Backspace': setGain(tg, 0); break;
    case 'm': case 'M': toggleMute(tg); break;
    case 'Enter': case 'F2': openEditor(tg); break;
    default: done = false;
  }
  if (done) ev.preventDefault();
}

/* row / column highlight: the heads of the hovered cell (class hl) and of the cursor (kbhl,
   shown while the grid has focus) */
function markHoverFor(c, who) {
  const cls = who === 'kb' ? 'kbhl' : 'hl';
  const prev = who === 'kb' ? G.kbHl : G.hover;
  const want = c && c.t === 'cell' ? [G.rows.get(c.i), G.cols.get(c.j)] : [];
  if (prev) for (const e of prev) if (e && !want.includes(e)) e.classList.remove(cls);
  for (const e of want) if (e) e.classList.add(cls);
  if (who === 'kb') G.kbHl = want; else G.hover = want;
}
function markHover() { if (G.hoverCell) markHoverFor(G.hoverCell, 'mouse'); }

/* ================================================================ 9. boot */

function boot() {
  initGrid();
  resetMeters();
  renderStatus();
  renderHeader();
  showEmpty('Connecting…');

  const sel = $('node-picker');
  sel.addEventListener('change', () => {
    const id = Number(sel.value);
    const n = S.nodes.find((x) => x.id === id);
    if (!n) return;
    try { localStorage.setItem(LS_NODE, JSON.stringify({ name: n.name, id: n.id })); } catch (e) { /* ignore */ }
    watch(id);
  });

  // pointer gestures on cells and gain controls (grid and master)
  document.addEventListener('pointerdown', onPointerDown);
  document.addEventListener('pointermove', onPointerMove);
  document.addEventListener('pointerup', onPointerUp);
  document.addEventListener('pointercancel', onPointerUp);
  // A dblclick the pointer handlers did not see as two taps (synthetic, or a slow OS setting).
  document.addEventListener('dblclick', (ev) => {
    const el = ev.target.closest('[data-v]');
    if (!el || !S.node) return;
    const tg = targetOf(el);
    if (!tg || (ED.el && sameTarget(ED.tg, tg))) return;
    lastTap = null;
    openEditor(tg, el);
  });
  G.vp.addEventListener('wheel', onWheel, { passive: false });
  $('master-gain').addEventListener('wheel', onWheel, { passive: false });
  G.vp.addEventListener('keydown', onGridKey);
  $('master-gain').addEventListener('keydown', onMasterKey);
  G.vp.addEventListener('pointerover', (ev) => {
    const el = ev.target.closest('.cell');
    G.hoverCell = el ? { t: 'cell', i: el._i, j: el._j } : null;
    markHoverFor(G.hoverCell, 'mouse');
  });
  G.vp.addEventListener('pointerleave', () => { G.hoverCell = null; markHoverFor(null, 'mouse'); });

  // buttons inside strips: mute, rename, clip reset
  G.vp.addEventListener('click', (ev) => {
    const act = ev.target.closest('[data-act]');
    if (!act || !S.node) return;
    const strip = act.closest('.istrip, .ostrip');
    if (!strip) return;
    const tg = strip._side === 'in' ? { t: 'in', i: strip._i } : { t: 'out', j: strip._i };
    setCursor(tg, false);
    if (L.on && act.dataset.act === 'mute') { learn(muteKeyOf(tg), act); return; }
    if (L.on && act.dataset.act === 'delay') { learn('delay.out.' + strip._i, act); return; }
    if (act.dataset.act === 'mute') toggleMute(tg);
    else if (act.dataset.act === 'rename') openEditor({ t: 'name', side: strip._side, i: strip._i }, strip._name);
    else if (act.dataset.act === 'delay') openEditor({ t: 'delay', j: strip._i }, strip._delay);
    else if (act.dataset.act === 'clip') { clearClip(strip); }
    if (act.dataset.act !== 'rename' && act.dataset.act !== 'delay') G.vp.focus({ preventScroll: true });
  });
  // focus on the grid with the mouse must not steal from buttons: buttons in strips keep focus off
  G.vp.addEventListener('mousedown', (ev) => { if (ev.target.closest('button')) ev.preventDefault(); });

  $('master-mute').addEventListener('click', () => {
    if (L.on) { toast('MIDI cannot switch the master mute (it is no key of the parameter table): map gain.master, or an input or output mute'); return; }
    toggleMute({ t: 'master' });
  });
  $('midi-learn').addEventListener('click', () => setLearn(!L.on));
  $('ramp').addEventListener('pointerdown', (ev) => {
    if (!L.on) return;
    ev.preventDefault();
    learn('ramp.ms', $('ramp'));
  });
  numberField('ramp', 'ramp.ms');
  numberField('inputs-count', 'inputs');
  numberField('outputs-count', 'outputs');
  presetControls();
  sceneControls();
  deviceControls();
  appControls();
  duckControls();
  $('error').addEventListener('click', () => { $('error').hidden = true; });

  api('api/status').then((s) => {
    S.daemon = (s && s.daemon) || '';
    renderStatus();
    loadParams();
    loadPresets();
    connect();
  }).catch((e) => {
    if (e.status === 401) return;     // needToken said it
    loadParams();
    loadPresets();
    connect();
  });
  requestAnimationFrame(meterFrame);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();

// The ssx viewer: a Foxglove WebSocket client (subprotocol foxglove.sdk.v1) that draws the
// /scene, /tf and /rays channels and the extensions' /overlays/... with three.js, and shows the
// daemon's /clock and /stats (with an exploration's progress) and its own frame rate and lag in
// a status bar.
//
// Built for swarms: bodies are instances (bodies.js), rays one line buffer (rays.js), and the
// page never queues: a transforms message replaces the one waiting to be drawn, so the picture
// is always the newest state received, however slowly this machine draws.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/OrbitControls.js';
import { pb, num, sub, all, utf8 } from './wire.js';
import { readFrame, readCamera, worldRays, Services, FRAME_ENCODING, CAMERA_ENCODING } from './frames.js';
import { Bodies } from './bodies.js';
import { Rays } from './rays.js';
import { Status } from './status.js';

const vec3 = m => (m ? new THREE.Vector3(num(m, 1), num(m, 2), num(m, 3)) : new THREE.Vector3());
const quat = m => (m ? new THREE.Quaternion(num(m, 1), num(m, 2), num(m, 3), num(m, 4)) : new THREE.Quaternion());
const color = m => (m ? { c: new THREE.Color(num(m, 1), num(m, 2), num(m, 3)), a: m[4] ? num(m, 4) : 0 } : { c: new THREE.Color(1, 1, 1), a: 1 });
function placePose(obj, m) {
  if (!m) return;
  obj.position.copy(vec3(sub(m, 1)));
  if (m[2]) obj.quaternion.copy(quat(sub(m, 2)));
}

// ---- three.js scene, z up as in ssx ----
THREE.Object3D.DEFAULT_UP.set(0, 0, 1);
const host = document.getElementById('view');
const renderer = new THREE.WebGLRenderer({ antialias: false });
renderer.setPixelRatio(window.devicePixelRatio);
host.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x1d2126);
const camera = new THREE.PerspectiveCamera(50, 1, 0.05, 2000);
camera.up.set(0, 0, 1);
camera.position.set(-7, -9, 7);
const controls = new OrbitControls(camera, renderer.domElement);
controls.target.set(0, 0, 0.5);
controls.update();
scene.add(new THREE.HemisphereLight(0xffffff, 0x444444, 2.2));
const sun = new THREE.DirectionalLight(0xffffff, 1.6);
sun.position.set(5, -8, 12);
scene.add(sun);

function resize() {
  const w = host.clientWidth, h = host.clientHeight;
  renderer.setSize(w, h);
  camera.aspect = w / Math.max(h, 1);
  camera.updateProjectionMatrix();
}
window.addEventListener('resize', resize);
resize();

const bodies = new Bodies(scene);
const rays = new Rays(scene);
const status = new Status();

function lines(m) {
  const pts = all(m, 5), cols = all(m, 7), one = color(sub(m, 6));
  const pos = new Float32Array(pts.length * 3), rgb = new Float32Array(pts.length * 3);
  pts.forEach((p, k) => {
    pos.set([num(p, 1), num(p, 2), num(p, 3)], 3 * k);
    const c = cols[k] ? color(cols[k]).c : one.c;
    rgb.set([c.r, c.g, c.b], 3 * k);
  });
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(pos, 3));
  g.setAttribute('color', new THREE.BufferAttribute(rgb, 3));
  const type = num(m, 1); // 0 strip, 1 loop, 2 list
  const mat = new THREE.LineBasicMaterial({ vertexColors: true, transparent: true, opacity: 0.9 });
  const obj = type === 2 ? new THREE.LineSegments(g, mat) : type === 1 ? new THREE.LineLoop(g, mat) : new THREE.Line(g, mat);
  placePose(obj, sub(m, 2));
  return obj;
}

let sceneSeen = false, fitted = false, sceneChanged = false;
// /scene (every body's shapes) and an overlay's shapes: entities added, replaced or deleted.
function onSceneUpdate(bytes, isScene) {
  const m = pb(bytes);
  for (const d of all(m, 1)) bodies.remove(utf8.decode(d[3] ? d[3][0] : new Uint8Array()));
  for (const e of all(m, 2)) bodies.add(e, lines);
  sceneChanged = true;
  if (isScene) {
    sceneSeen = true;
    document.getElementById('bodies').textContent = bodies.entities.size;
  }
}
// The pulled frames (frames.js): the layout once, then one frame at a time, the next asked for
// when this one is drawn.
let layout = null, frameOf = [], pending = null, inFlight = false, lastStep = 0, services = null;
// The world's episode (resets before it), from the layout; a frame of another one means the run
// was reset: the layout is asked for again and the old rays go.
let episode = 0;
let rayScratch = new Float32Array(0);
function onLayout(l) {
  layout = l;
  episode = l.episode || 0;
  frameOf = l.frames.map(id => bodies.frame(id));
  status.onRays(l.rays.shown, l.rays.total);
  showCameras(l.cameras || []);
}
// A camera's picture in the top right corner (/ssx/camera): the chosen camera's newest one,
// asked for again when it has been drawn, like the frames.
let cameraIndex = -1, cameraStep = 0, cameraInFlight = false, cameraPending = null;
function showCameras(cameras) {
  const box = document.getElementById('camera'), pick = document.getElementById('camera-pick');
  pick.replaceChildren(...cameras.map((c, i) => new Option(`${c.path} (${c.width} × ${c.height})`, i)),
    new Option('no camera', -1));
  box.hidden = cameras.length === 0;
  cameraIndex = cameras.length ? 0 : -1;
  pick.value = String(cameraIndex);
  cameraStep = 0;
  pick.onchange = () => { cameraIndex = Number(pick.value); cameraStep = 0; document.getElementById('camera-image').hidden = cameraIndex < 0; };
}
function pullCamera() {
  if (!services || cameraIndex < 0 || cameraInFlight) return;
  cameraInFlight = true;
  const ask = services, index = cameraIndex;
  ask.call('/ssx/camera', { camera: index, after: cameraStep }).then(r => {
    if (r.encoding !== CAMERA_ENCODING) throw new Error('/ssx/camera answered in ' + r.encoding);
    const p = readCamera(r.payload);
    if (p && index === cameraIndex) { cameraPending = p; cameraStep = p.step; }
  }).catch(e => { if (ask === services) console.error('ssx view: ' + e.message); })
    .finally(() => { if (ask === services) cameraInFlight = false; });
}
function drawCamera() {
  if (!cameraPending) return;
  const p = cameraPending, canvas = document.getElementById('camera-image');
  cameraPending = null;
  if (canvas.width !== p.width || canvas.height !== p.height) { canvas.width = p.width; canvas.height = p.height; }
  canvas.getContext('2d').putImageData(new ImageData(p.rgba, p.width, p.height), 0, 0);
  state.camera = { path: layout.cameras[cameraIndex].path, step: p.step, width: p.width, height: p.height };
}
function pull() {
  if (!services || !layout || inFlight) return;
  inFlight = true;
  const ask = services;
  ask.call('/ssx/frame', { after: lastStep, episode }).then(async r => {
    if (r.encoding !== FRAME_ENCODING) throw new Error('/ssx/frame answered in ' + r.encoding);
    const f = readFrame(r.payload);
    if (f.episode !== episode) {
      // A reset: the new world's layout before its first frame is drawn.
      onLayout(JSON.parse(utf8.decode((await ask.call('/ssx/layout', {})).payload)));
      rays.clear();
      pending = null;
      lastStep = 0;
      cameraStep = 0;
      state.resets++;
      if (f.episode !== episode) return; // reset again meanwhile: the next frame says
    }
    if (pending) state.framesSkipped++;
    pending = f;
    lastStep = pending.step;
    state.framesReceived++;
  }).catch(e => { if (ask === services) console.error('ssx view: ' + e.message); })
    .finally(() => {
      if (ask !== services) return;
      inFlight = false;
      // The next is asked for at once, so that it travels while this one waits to be drawn: one
      // call in flight, one frame waiting at most; a frame not drawn before the next arrives is
      // skipped (counted).
      pull();
    });
}
function applyFrame() {
  if (!pending) return;
  const f = pending;
  pending = null;
  const n = Math.min(f.count, frameOf.length);
  for (let k = 0; k < n; k++) bodies.pose(frameOf[k], f.poses, 7 * k);
  for (const r of f.rays) {
    const s = layout.sensors[r.sensor];
    if (!s || s.body >= f.count) continue;
    rayScratch = worldRays(f.poses, 7 * s.body, layout.geometries[s.geometry], r.distances, rayScratch);
    rays.update(s.path, rayScratch, 2 * r.distances.length);
  }
  if (f.rays.length) status.onPageRays(rays.drawn, rays.left);
  state.tfFrames++;
  status.drawn(f.time, f.wall);
  if (sceneSeen && !fitted) fit();
}
// Frame the camera on everything but the ground (the whole scene, walls included): looking down
// at it from the south-south-west, far enough that the sphere around it fits the view.
function fit() {
  const box = bodies.bounds();
  if (!box) return;
  fitted = true;
  const c = box.getCenter(new THREE.Vector3()), r = Math.max(box.getSize(new THREE.Vector3()).length() / 2, 1);
  const half = THREE.MathUtils.degToRad(camera.fov / 2);
  const fits = Math.min(Math.sin(half), Math.sin(Math.atan(Math.tan(half) * camera.aspect)));
  const along = new THREE.Vector3(-0.35, -1.0, 1.1).normalize().multiplyScalar(0.95 * r / fits);
  controls.target.copy(c);
  camera.position.copy(c).add(along);
  camera.far = Math.max(2000, 4 * along.length());
  camera.updateProjectionMatrix();
  controls.update();
}

// An extension's overlay (foxglove.Grid of RGBA cells) laid flat just above the floor; later
// overlays of a scene above earlier ones.
const overlays = new Map(); // topic -> { mesh, texture, width, height, data }
const pendingGrids = new Map(); // topic -> the newest grid not yet drawn
function onGrid(bytes, topic) {
  const m = pb(bytes), width = num(m, 4), cell = sub(m, 5), data = m[9] ? m[9][0] : new Uint8Array();
  const res = cell ? num(cell, 1) : 1, height = width ? Math.floor(data.length / 4 / width) : 0;
  if (!width || !height || num(m, 7) !== 4) return;
  let o = overlays.get(topic);
  if (!o || o.width !== width || o.height !== height) {
    if (o) { scene.remove(o.mesh); o.mesh.geometry.dispose(); o.mesh.material.dispose(); o.texture.dispose(); }
    const pixels = new Uint8Array(width * height * 4);
    const texture = new THREE.DataTexture(pixels, width, height, THREE.RGBAFormat);
    texture.magFilter = THREE.NearestFilter;
    const mesh = new THREE.Mesh(new THREE.PlaneGeometry(width * res, height * res),
      new THREE.MeshBasicMaterial({ map: texture, transparent: true, depthWrite: false }));
    mesh.renderOrder = 1 + overlays.size;
    o = { mesh, texture, width, height, data: pixels, layer: overlays.size };
    overlays.set(topic, o);
    scene.add(mesh);
  }
  o.data.set(data);
  o.texture.needsUpdate = true;
  const origin = vec3(sub(sub(m, 3) || {}, 1));
  o.mesh.position.set(origin.x + width * res / 2, origin.y + height * res / 2, origin.z + 0.01 + 0.005 * o.layer);
}
// For tests: an overlay's size, how many of its cells are drawn (alpha above 0) and how many
// of those are white (the explored map's explored cells).
function overlayCells(topic) {
  const o = overlays.get(topic);
  if (!o) return null;
  let drawn = 0, white = 0;
  for (let i = 0; i < o.data.length; i += 4) {
    if (o.data[i + 3] === 0) continue;
    drawn++;
    if (o.data[i] === 255 && o.data[i + 1] === 255 && o.data[i + 2] === 255) white++;
  }
  return { width: o.width, height: o.height, drawn, white };
}

// ---- the Foxglove WebSocket protocol ----
const state = { tfFrames: 0, framesReceived: 0, framesSkipped: 0, draws: 0, resets: 0, connected: false, status };
window.ssxView = state; // for tests and the console
// A world point on the screen, in CSS pixels.
function toScreen(p) {
  const s = p.clone().project(camera), r = renderer.domElement.getBoundingClientRect();
  return [r.left + (s.x + 1) / 2 * r.width, r.top + (1 - s.y) / 2 * r.height];
}
// Where a body is: its frame's world position, and that point on the screen.
state.locate = prefix => {
  const f = bodies.find(prefix);
  return f && { id: f.id, world: f.position.toArray(), screen: toScreen(f.position) };
};
state.project = xyz => toScreen(new THREE.Vector3(...xyz));
state.bodies = () => bodies.entities.size;
// The shapes of the entities whose id starts with `prefix`, as sorted "x,y,z" of their local
// positions (cm): two pages that draw the same world agree.
state.shapesOf = prefix => {
  const out = [];
  for (const [id, e] of bodies.entities) {
    if (!id.startsWith(prefix)) continue;
    for (const r of e.records) {
      const m = r.local.elements;
      out.push([m[12], m[13], m[14]].map(v => Math.round(100 * v)).join(','));
    }
  }
  return out.sort();
};
state.drawCalls = () => renderer.info.render.calls;
// The meshes: files asked for, arrived, failed; their triangles; the bodies' mesh instances.
state.meshes = () => {
  const out = { files: 0, loaded: 0, failed: [], triangles: 0, instances: 0 };
  for (const [url, m] of bodies.meshes) {
    out.files++;
    if (m.failed) out.failed.push(`${url}: ${m.failed}`);
    else if (m.triangles) { out.loaded++; out.triangles += m.triangles; }
  }
  for (const [key, b] of bodies.batches) if (key.startsWith('mesh:')) out.instances += b.records.length;
  return out;
};
// Shows or hides every mesh (a test compares the two pictures).
state.meshesVisible = visible => {
  for (const [key, b] of bodies.batches) if (key.startsWith('mesh:')) b.mesh.visible = visible;
};
state.overlay = overlayCells;
state.overlayTopics = () => [...overlays.keys()];
const el = id => document.getElementById(id);
const port = document.querySelector('meta[name="ssx-ws-port"]').content;
function onStats(o) {
  status.onStats(o);
  // An exploration's progress, from the daemon's figures (the explore extension's metrics).
  const m = o.metrics || {}, key = Object.keys(m).find(k => k.endsWith('.explored'));
  if (key) {
    const ext = key.slice(0, -'.explored'.length);
    state.explored = m[key];
    state.exploredAt = [50, 90, 99].map(p => m[`${ext}.explored_${p}_s`] ?? null);
  }
}
function showStatus() {
  const t = status.texts(Date.now() / 1000);
  for (const k of ['simtime', 'step', 'rtf', 'misses', 'fps', 'lag']) el(k).textContent = t[k];
  el('misses').className = status.misses ? 'bad' : '';
  el('rays-box').hidden = t.rays == null;
  if (t.rays != null) el('rays').textContent = t.rays;
  if (state.explored != null) {
    el('explore').hidden = false;
    const at = state.exploredAt.map((t, i) => `${[50, 90, 99][i]}% ${t == null ? '–' : t.toFixed(1) + ' s'}`);
    el('explored').textContent = `${(100 * state.explored).toFixed(1)}% (${at.join(', ')})`;
    state.shownExplored = state.explored;
  }
  el('conn').textContent = state.connected ? 'live' : 'disconnected';
  el('conn').className = state.connected ? 'ok' : 'off';
}
function connect() {
  const ws = new WebSocket(`ws://${location.hostname}:${port}`, ['foxglove.sdk.v1']);
  ws.binaryType = 'arraybuffer';
  const handlers = new Map(); // subscription id -> handler
  const subOf = new Map(); // channel id -> [subscription id, times sent]
  let nextSub = 1;
  const subscribe = subs => ws.send(JSON.stringify({ op: 'subscribe', subscriptions: subs }));
  // Every handler is quick: grids are only kept, the newest drawn at the next animation frame.
  // Transforms and rays are not subscribed to: the page pulls them (pull()).
  const wanted = {
    '/scene': b => onSceneUpdate(b, true),
    '/clock': b => status.clock(JSON.parse(utf8.decode(b))),
    '/reset': b => status.restart(JSON.parse(utf8.decode(b)).episode),
    '/stats': b => onStats(JSON.parse(utf8.decode(b))),
  };
  // Extensions' overlays: grids of cells, or shapes (tags, comms links) as scene entities.
  const handlerOf = ch => wanted[ch.topic] || (!ch.topic.startsWith('/overlays/') ? null
    : ch.schemaName === 'foxglove.SceneUpdate' ? b => onSceneUpdate(b, false) : b => pendingGrids.set(ch.topic, b));
  const ask = new Services(ws);
  ws.onopen = () => { state.connected = true; };
  ws.onclose = () => {
    state.connected = false;
    if (services === ask) { services = null; inFlight = false; }
    ask.close();
    setTimeout(connect, 1000);
  };
  ws.onmessage = ev => {
    if (typeof ev.data === 'string') {
      const msg = JSON.parse(ev.data);
      if (msg.op === 'serverInfo') { el('scene').textContent = msg.name || 'ssx'; }
      if (msg.op === 'serviceCallFailure') ask.failure(msg);
      // The Foxglove SDK (0.30.3) sends a channel's advertisement before it records the channel,
      // so a subscription sent at once can be refused as unknown: sent again, later each time
      // (0.1 s, 0.2 s, ...; seven times at most, 2.8 s in all).
      const refused = msg.op === 'status' && msg.level === 2 && /^Unknown channel ID: (\d+)$/.exec(msg.message);
      const again = refused && subOf.get(Number(refused[1]));
      if (again && again[1] < 8) {
        setTimeout(() => subscribe([{ id: again[0], channelId: Number(refused[1]) }]), 100 * again[1]);
        again[1]++;
      }
      if (msg.op === 'advertiseServices') {
        ask.advertise(msg);
        if (ask.has('/ssx/layout') && ask.has('/ssx/frame')) {
          cameraInFlight = false;
          ask.call('/ssx/layout', {}).then(r => {
            onLayout(JSON.parse(utf8.decode(r.payload)));
            services = ask;
            lastStep = 0;
            pull();
          }).catch(e => console.error('ssx view: ' + e.message));
        }
      }
      if (msg.op === 'advertise') {
        const subs = [];
        for (const ch of msg.channels) {
          const h = handlerOf(ch);
          if (h) { const id = nextSub++; handlers.set(id, h); subOf.set(ch.id, [id, 1]); subs.push({ id, channelId: ch.id }); }
        }
        if (subs.length) subscribe(subs);
      }
      return;
    }
    const b = new Uint8Array(ev.data);
    if (ask.response(b)) return; // 3: a service's answer
    if (b[0] !== 1) return; // 1: message data; 2 (time) is not needed, /clock carries it
    const h = handlers.get(new DataView(ev.data).getUint32(1, true));
    if (h) h(b.subarray(13));
  };
}
connect();
setInterval(showStatus, 250);
// Drawn when something changed (a new frame, the camera, a grid, the scene): a software
// renderer's time is better spent on the next frame than on the same picture again.
let dirty = true;
controls.addEventListener('change', () => { dirty = true; });
window.addEventListener('resize', () => { dirty = true; });
renderer.setAnimationLoop(now => {
  const fresh = pending != null;
  applyFrame();
  pull();
  drawCamera();
  pullCamera();
  for (const [topic, bytes] of pendingGrids) onGrid(bytes, topic);
  dirty ||= fresh || pendingGrids.size > 0 || rays.dirty != null || sceneChanged;
  pendingGrids.clear();
  sceneChanged = false;
  rays.upload();
  controls.update();
  if (!dirty) return;
  dirty = false;
  renderer.render(scene, camera);
  state.draws++;
  status.frame(now);
});

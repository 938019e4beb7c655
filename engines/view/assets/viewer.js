// The ssx viewer: a Foxglove WebSocket client (subprotocol foxglove.sdk.v1) that draws the
// /scene, /tf and /rays channels and the extensions' /overlays/... grids with three.js, and
// shows /clock and /stats (with an exploration's progress) in a status bar.
// The scene channels carry Foxglove's protobuf schemas; a small decoder below reads the few
// message types used here.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/OrbitControls.js';

// ---- protobuf: just enough to read foxglove.SceneUpdate and foxglove.FrameTransforms ----
function varint(b, i) {
  let v = 0, mul = 1, c;
  do { c = b[i++]; v += (c & 0x7f) * mul; mul *= 128; } while (c & 0x80);
  return [v, i];
}
// A message as {field number: [values]}: varints as numbers, doubles as numbers, bytes as views.
function pb(b) {
  const out = {}, dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let i = 0;
  while (i < b.length) {
    let key, v; [key, i] = varint(b, i);
    const f = Math.floor(key / 8), wt = key & 7;
    if (wt === 0) { [v, i] = varint(b, i); }
    else if (wt === 1) { v = dv.getFloat64(i, true); i += 8; }
    else if (wt === 2) { let n; [n, i] = varint(b, i); v = b.subarray(i, i + n); i += n; }
    else if (wt === 5) { v = dv.getUint32(i, true); i += 4; }
    else throw new Error('protobuf wire type ' + wt);
    (out[f] ||= []).push(v);
  }
  return out;
}
const utf8 = new TextDecoder();
const num = (m, f) => (m[f] ? m[f][m[f].length - 1] : 0);
const str = (m, f) => (m[f] ? utf8.decode(m[f][0]) : '');
const sub = (m, f) => (m[f] ? pb(m[f][0]) : null);
const all = (m, f) => (m[f] || []).map(pb);
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
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio);
host.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x1d2126);
const camera = new THREE.PerspectiveCamera(50, 1, 0.05, 500);
camera.up.set(0, 0, 1);
camera.position.set(-7, -9, 7);
const controls = new OrbitControls(camera, renderer.domElement);
controls.target.set(0, 0, 0.5);
controls.update();
scene.add(new THREE.HemisphereLight(0xffffff, 0x444444, 2.2));
const sun = new THREE.DirectionalLight(0xffffff, 1.6);
sun.position.set(5, -8, 12);
scene.add(sun);
const grid = new THREE.GridHelper(60, 60, 0x555555, 0x333333);
grid.rotation.x = Math.PI / 2;
scene.add(grid);

function resize() {
  const w = host.clientWidth, h = host.clientHeight;
  renderer.setSize(w, h);
  camera.aspect = w / Math.max(h, 1);
  camera.updateProjectionMatrix();
}
window.addEventListener('resize', resize);
resize();

const frames = new Map();   // frame id -> Group posed by /tf
const entities = new Map(); // entity id -> Object3D
function frameGroup(id) {
  if (id === 'world' || id === '') return scene;
  let g = frames.get(id);
  if (!g) { g = new THREE.Group(); g.name = id; g.visible = false; frames.set(id, g); scene.add(g); }
  return g;
}
function material(col) {
  return new THREE.MeshStandardMaterial({ color: col.c, transparent: col.a < 1, opacity: col.a, roughness: 0.8 });
}
const unitSphere = new THREE.SphereGeometry(0.5, 24, 16);
const unitCylinder = new THREE.CylinderGeometry(0.5, 0.5, 1, 24).rotateX(Math.PI / 2); // along z
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
function entityObject(e) {
  const root = new THREE.Group();
  for (const c of all(e, 8)) { // cubes
    const s = vec3(sub(c, 2));
    const mesh = new THREE.Mesh(new THREE.BoxGeometry(s.x, s.y, s.z), material(color(sub(c, 3))));
    placePose(mesh, sub(c, 1));
    mesh.userData.big = Math.max(s.x, s.y) > 40;
    root.add(mesh);
  }
  for (const c of all(e, 9)) { // spheres
    const mesh = new THREE.Mesh(unitSphere, material(color(sub(c, 3))));
    placePose(mesh, sub(c, 1));
    mesh.scale.copy(vec3(sub(c, 2)));
    root.add(mesh);
  }
  for (const c of all(e, 10)) { // cylinders
    const mesh = new THREE.Mesh(unitCylinder, material(color(sub(c, 5))));
    placePose(mesh, sub(c, 1));
    mesh.scale.copy(vec3(sub(c, 2)));
    root.add(mesh);
  }
  for (const l of all(e, 11)) root.add(lines(l));
  return root;
}
function dispose(obj) {
  obj.traverse(o => {
    if (o.geometry && o.geometry !== unitSphere && o.geometry !== unitCylinder) o.geometry.dispose();
    if (o.material) o.material.dispose();
  });
}
let sceneSeen = false, fitted = false;
function onSceneUpdate(bytes, isScene) {
  const m = pb(bytes);
  for (const d of all(m, 1)) {
    const id = str(d, 3), old = entities.get(id);
    if (old) { old.parent.remove(old); dispose(old); entities.delete(id); }
  }
  for (const e of all(m, 2)) {
    const id = str(e, 3), old = entities.get(id);
    if (old) { old.parent.remove(old); dispose(old); }
    const obj = entityObject(e);
    frameGroup(str(e, 2)).add(obj);
    entities.set(id, obj);
  }
  if (isScene) {
    sceneSeen = true;
    grid.visible = ![...entities.values()].some(o => o.children.some(c => c.userData.big));
    document.getElementById('bodies').textContent = entities.size;
  }
}
function onTransforms(bytes) {
  for (const t of all(pb(bytes), 1)) {
    const g = frameGroup(str(t, 3));
    g.position.copy(vec3(sub(t, 4)));
    g.quaternion.copy(quat(sub(t, 5)));
    g.visible = true;
  }
  state.tfFrames++;
  if (sceneSeen && !fitted) fit();
}
// Frame the camera on everything but the ground.
function fit() {
  const box = new THREE.Box3();
  scene.updateMatrixWorld(true);
  for (const g of frames.values()) g.traverse(o => { if (o.isMesh && !o.userData.big) box.expandByObject(o); });
  if (box.isEmpty()) return;
  fitted = true;
  const c = box.getCenter(new THREE.Vector3()), r = Math.max(box.getSize(new THREE.Vector3()).length() / 2, 1);
  controls.target.copy(c);
  camera.position.set(c.x - 0.5 * r, c.y - 1.0 * r, c.z + 0.7 * r);
  controls.update();
}

// An extension's overlay (foxglove.Grid of RGBA cells) laid flat just above the floor; later
// overlays of a scene above earlier ones.
const overlays = new Map(); // topic -> { mesh, texture, width, height, data }
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
const state = { simTime: null, step: null, misses: null, tfFrames: 0, rtf: null, connected: false, scene: null };
window.ssxView = state; // for tests and the console
// Where a body is: its frame's world position, and that point on the screen in CSS pixels.
state.locate = prefix => {
  for (const [id, g] of frames) {
    if (!id.startsWith(prefix) || !g.visible) continue;
    const p = g.getWorldPosition(new THREE.Vector3()), s = p.clone().project(camera);
    const r = renderer.domElement.getBoundingClientRect();
    return { id, world: [p.x, p.y, p.z], screen: [r.left + (s.x + 1) / 2 * r.width, r.top + (1 - s.y) / 2 * r.height] };
  }
  return null;
};
state.bodies = () => entities.size;
state.overlay = overlayCells;
state.overlayTopics = () => [...overlays.keys()];
const el = id => document.getElementById(id);
const port = document.querySelector('meta[name="ssx-ws-port"]').content;
let rtfWindow = null; // [wall ms, sim s]
function onClock(o) {
  state.simTime = o.time; state.step = o.step;
  const now = performance.now();
  if (!rtfWindow) rtfWindow = [now, o.time];
  else if (now - rtfWindow[0] >= 1000) {
    state.rtf = (o.time - rtfWindow[1]) / ((now - rtfWindow[0]) / 1000);
    rtfWindow = [now, o.time];
  }
}
function onStats(o) {
  state.misses = o.deadline_misses;
  // An exploration's progress, from the daemon's figures (the explore extension's metrics).
  const m = o.metrics || {}, key = Object.keys(m).find(k => k.endsWith('.explored'));
  if (key) {
    const ext = key.slice(0, -'.explored'.length);
    state.explored = m[key];
    state.exploredAt = [50, 90, 99].map(p => m[`${ext}.explored_${p}_s`] ?? null);
  }
}
function showStatus() {
  el('simtime').textContent = state.simTime == null ? '–' : state.simTime.toFixed(2) + ' s';
  el('step').textContent = state.step == null ? '–' : state.step;
  el('rtf').textContent = state.rtf == null ? '–' : '×' + state.rtf.toFixed(2);
  el('misses').textContent = state.misses == null ? '–' : state.misses;
  el('misses').className = state.misses ? 'bad' : '';
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
  let nextSub = 1;
  const wanted = {
    '/scene': b => onSceneUpdate(b, true),
    '/rays': b => onSceneUpdate(b, false),
    '/tf': onTransforms,
    '/clock': b => onClock(JSON.parse(utf8.decode(b))),
    '/stats': b => onStats(JSON.parse(utf8.decode(b))),
  };
  // Extensions' overlays: grids of cells, or shapes (tags, comms links) as scene entities.
  const handlerOf = ch => wanted[ch.topic] || (!ch.topic.startsWith('/overlays/') ? null
    : ch.schemaName === 'foxglove.SceneUpdate' ? b => onSceneUpdate(b, false) : b => onGrid(b, ch.topic));
  ws.onopen = () => { state.connected = true; };
  ws.onclose = () => { state.connected = false; setTimeout(connect, 1000); };
  ws.onmessage = ev => {
    if (typeof ev.data === 'string') {
      const msg = JSON.parse(ev.data);
      if (msg.op === 'serverInfo') { el('scene').textContent = msg.name || 'ssx'; }
      if (msg.op === 'advertise') {
        const subs = [];
        for (const ch of msg.channels) {
          const h = handlerOf(ch);
          if (h) { const id = nextSub++; handlers.set(id, h); subs.push({ id, channelId: ch.id }); }
        }
        if (subs.length) ws.send(JSON.stringify({ op: 'subscribe', subscriptions: subs }));
      }
      return;
    }
    const b = new Uint8Array(ev.data);
    if (b[0] !== 1) return; // 1: message data; 2 (time) is not needed, /clock carries it
    const dv = new DataView(ev.data);
    const h = handlers.get(dv.getUint32(1, true));
    if (h) h(b.subarray(13));
  };
}
connect();
setInterval(showStatus, 200);
renderer.setAnimationLoop(() => { controls.update(); renderer.render(scene, camera); });

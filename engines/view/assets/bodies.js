// Bodies drawn as instances: every box, sphere or cylinder of the scene is one instance of a
// unit shape in an InstancedMesh, one mesh (one draw call) per kind of shape and opacity, the
// colour per instance. A body's transform moves its instances (its matrix times each shape's
// pose and size); a body that did not move costs nothing. 10,000 robots are a few draw calls,
// where one mesh per shape would be 10,000.
// A mesh (a model primitive: a binary STL the page server answers once, however many bodies wear
// it) is one more instanced batch, its geometry filled in when its file arrives.
// Lines (the ground's grid, an overlay's links) stay ordinary objects in a group per frame.
import * as THREE from 'three';
import { all, num, sub, str } from './wire.js';

const UNIT = {
  box: new THREE.BoxGeometry(1, 1, 1),
  sphere: new THREE.SphereGeometry(0.5, 16, 12),
  cylinder: new THREE.CylinderGeometry(0.5, 0.5, 1, 16).rotateX(Math.PI / 2), // along z
};
// A zero matrix: an instance whose body has no transform yet is not drawn.
const HIDDEN = new THREE.Matrix4().set(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

// One InstancedMesh of one unit shape, grown by doubling; instances removed by moving the last
// one into the hole.
class Batch {
  constructor(scene, kind, alpha, geometry) {
    this.scene = scene;
    this.geometry = geometry || UNIT[kind];
    // Its shapes' box before their pose and scale: the unit cube, or a mesh's when it comes.
    this.box = geometry ? new THREE.Box3() : new THREE.Box3(new THREE.Vector3(-0.5, -0.5, -0.5), new THREE.Vector3(0.5, 0.5, 0.5));
    this.material = new THREE.MeshStandardMaterial({ color: 0xffffff, roughness: 0.8, transparent: alpha < 1, opacity: alpha });
    this.records = [];
    this.mesh = null;
    this.grow(64);
  }
  grow(capacity) {
    const mesh = new THREE.InstancedMesh(this.geometry, this.material, capacity);
    mesh.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
    mesh.setColorAt(0, new THREE.Color());
    mesh.frustumCulled = false; // instances move anywhere; the bounds would go stale
    if (this.mesh) {
      mesh.instanceMatrix.array.set(this.mesh.instanceMatrix.array);
      mesh.instanceColor.array.set(this.mesh.instanceColor.array);
      this.scene.remove(this.mesh);
      this.mesh.dispose();
    }
    mesh.count = this.records.length;
    this.mesh = mesh;
    this.scene.add(mesh);
  }
  add(record, color) {
    if (this.records.length === this.mesh.instanceMatrix.count) this.grow(2 * this.records.length);
    record.batch = this;
    record.index = this.records.length;
    this.records.push(record);
    this.mesh.count = this.records.length;
    this.mesh.setColorAt(record.index, color);
    this.mesh.instanceColor.needsUpdate = true;
  }
  remove(record) {
    const last = this.records.pop(), i = record.index;
    if (last !== record) {
      this.records[i] = last;
      last.index = i;
      const m = this.mesh.instanceMatrix.array, c = this.mesh.instanceColor.array, j = this.records.length;
      m.copyWithin(16 * i, 16 * j, 16 * j + 16);
      c.copyWithin(3 * i, 3 * j, 3 * j + 3);
      this.mesh.instanceColor.needsUpdate = true;
    }
    this.mesh.count = this.records.length;
    this.mesh.instanceMatrix.needsUpdate = true;
  }
  // A mesh's geometry, arrived.
  setGeometry(geometry) {
    this.geometry = geometry;
    this.mesh.geometry = geometry;
    geometry.computeBoundingBox();
    this.box.copy(geometry.boundingBox);
  }
  set(record, matrix) {
    matrix.toArray(this.mesh.instanceMatrix.array, 16 * record.index);
    this.mesh.instanceMatrix.needsUpdate = true;
  }
}

// A binary STL (80-byte header, triangle count, then per triangle a normal, three corners and
// two bytes) as a geometry with flat normals; null if the bytes are not one.
export function stlGeometry(bytes) {
  if (bytes.byteLength < 84) return null;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), n = dv.getUint32(80, true);
  if (bytes.byteLength !== 84 + 50 * n) return null;
  const pos = new Float32Array(9 * n), nor = new Float32Array(9 * n);
  for (let t = 0; t < n; t++) {
    const o = 84 + 50 * t;
    for (let v = 0; v < 3; v++) {
      for (let k = 0; k < 3; k++) {
        nor[9 * t + 3 * v + k] = dv.getFloat32(o + 4 * k, true);
        pos[9 * t + 3 * v + k] = dv.getFloat32(o + 12 + 12 * v + 4 * k, true);
      }
    }
  }
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(pos, 3));
  g.setAttribute('normal', new THREE.BufferAttribute(nor, 3));
  return g;
}

// Where to fetch a model's mesh: ours (`/meshes/...`) from the server that served this page,
// whatever address the daemon wrote (it may have bound 0.0.0.0); another URL as it is.
function meshUrl(url) {
  try {
    const u = new URL(url, location.href);
    return u.pathname.startsWith('/meshes/') ? new URL(u.pathname, location.href).href : u.href;
  } catch { return url; }
}

const vec3 = m => (m ? new THREE.Vector3(num(m, 1), num(m, 2), num(m, 3)) : new THREE.Vector3());
const quat = m => (m ? new THREE.Quaternion(num(m, 1), num(m, 2), num(m, 3), num(m, 4)) : new THREE.Quaternion());
const rgba = m => (m ? [new THREE.Color(num(m, 1), num(m, 2), num(m, 3)), m[4] ? num(m, 4) : 0] : [new THREE.Color(1, 1, 1), 1]);
function poseMatrix(m, scale) {
  const p = m ? sub(m, 1) : null, q = m && m[2] ? quat(sub(m, 2)) : new THREE.Quaternion();
  return new THREE.Matrix4().compose(vec3(p), q, scale);
}

// A frame a transform poses: its matrix, its instances and (made when needed) a group for lines.
class Frame {
  constructor(id) {
    this.id = id;
    this.matrix = null; // none until its first transform
    this.last = new Float64Array(7).fill(NaN);
    this.records = new Set();
    this.group = null;
  }
}

export class Bodies {
  constructor(scene) {
    this.scene = scene;
    this.batches = new Map();  // `${kind}/${alpha}` -> Batch
    this.frames = new Map();   // frame id -> Frame
    this.entities = new Map(); // entity id -> { records, objects, frame, flat }
    this.meshes = new Map();   // mesh URL -> { triangles, failed }, as its file arrives
    this.world = new Frame('world');
    this.world.matrix = new THREE.Matrix4();
    this.tmp = new THREE.Matrix4();
    this.position = new THREE.Vector3();
    this.rotation = new THREE.Quaternion();
    this.one = new THREE.Vector3(1, 1, 1);
  }

  frame(id) {
    if (id === 'world' || id === '') return this.world;
    let f = this.frames.get(id);
    if (!f) { f = new Frame(id); this.frames.set(id, f); }
    return f;
  }

  // A scene entity (pb-read): its boxes, spheres and cylinders become instances, its lines
  // objects; one with the same id is replaced. `lines(m)` makes a line object from a
  // LinePrimitive.
  add(e, lines) {
    const id = str(e, 3);
    this.remove(id);
    const frame = this.frame(str(e, 2));
    const entity = { records: [], objects: [], frame };
    const shape = (kind, m) => {
      const [color, alpha] = rgba(sub(m, kind === 'cylinder' ? 5 : 3));
      const s = vec3(sub(m, 2));
      const key = `${kind}/${alpha}`;
      let batch = this.batches.get(key);
      if (!batch) { batch = new Batch(this.scene, kind, alpha); this.batches.set(key, batch); }
      // A flat shape (the ground's square) is not framed by the camera.
      const record = { local: poseMatrix(sub(m, 1), s), frame, flat: s.z < 0.01 };
      batch.add(record, color);
      this.place(record);
      frame.records.add(record);
      entity.records.push(record);
    };
    for (const c of all(e, 8)) shape('box', c);
    for (const c of all(e, 9)) shape('sphere', c);
    for (const c of all(e, 10)) shape('cylinder', c);
    all(e, 14).forEach((m, k) => {
      const [color, alpha] = rgba(sub(m, 3));
      const data = m[7] ? m[7][0] : null, url = data ? `data/${id}/${k}` : meshUrl(str(m, 5));
      const key = `mesh:${url}/${alpha}`;
      let batch = this.batches.get(key);
      if (!batch) {
        batch = new Batch(this.scene, 'mesh', alpha, new THREE.BufferGeometry());
        this.batches.set(key, batch);
        this.load(url, data, batch);
      }
      const s = m[2] ? vec3(sub(m, 2)) : new THREE.Vector3(1, 1, 1);
      const record = { local: poseMatrix(sub(m, 1), s), frame, flat: false };
      batch.add(record, color);
      this.place(record);
      frame.records.add(record);
      entity.records.push(record);
    });
    for (const l of all(e, 11)) {
      const obj = lines(l);
      if (!frame.group) {
        frame.group = new THREE.Group();
        frame.group.matrixAutoUpdate = false;
        frame.group.visible = frame.matrix != null;
        if (frame.matrix) frame.group.matrix.copy(frame.matrix);
        this.scene.add(frame.group);
      }
      frame.group.add(obj);
      entity.objects.push(obj);
    }
    this.entities.set(id, entity);
  }

  // A mesh's file (or its bytes, embedded) into its batch's geometry.
  async load(url, data, batch) {
    const seen = { triangles: 0, failed: null };
    this.meshes.set(url, seen);
    try {
      let bytes = data;
      if (!bytes) {
        const r = await fetch(url);
        if (!r.ok) throw new Error(`HTTP ${r.status}`);
        bytes = new Uint8Array(await r.arrayBuffer());
      }
      const g = stlGeometry(bytes);
      if (!g) throw new Error('not a binary STL');
      batch.setGeometry(g);
      seen.triangles = g.attributes.position.count / 3;
    } catch (e) {
      seen.failed = String(e.message || e);
      console.warn(`mesh ${url}: ${seen.failed}`);
    }
  }

  remove(id) {
    const old = this.entities.get(id);
    if (!old) return;
    for (const r of old.records) { r.batch.remove(r); old.frame.records.delete(r); }
    for (const o of old.objects) {
      o.parent.remove(o);
      o.geometry.dispose();
      o.material.dispose();
    }
    this.entities.delete(id);
  }

  place(record) {
    const f = record.frame;
    record.batch.set(record, f.matrix ? this.tmp.multiplyMatrices(f.matrix, record.local) : HIDDEN);
  }

  // Frame `f` is at pose p[at..at+7] (x, y, z, qx, qy, qz, qw); nothing is done if it has not
  // moved since the last time.
  pose(f, p, at) {
    const l = f.last;
    if (l[0] === p[at] && l[1] === p[at + 1] && l[2] === p[at + 2] && l[3] === p[at + 3]
      && l[4] === p[at + 4] && l[5] === p[at + 5] && l[6] === p[at + 6]) return;
    for (let k = 0; k < 7; k++) l[k] = p[at + k];
    f.matrix ||= new THREE.Matrix4();
    this.position.set(p[at], p[at + 1], p[at + 2]);
    this.rotation.set(p[at + 3], p[at + 4], p[at + 5], p[at + 6]);
    f.matrix.compose(this.position, this.rotation, this.one);
    for (const r of f.records) this.place(r);
    if (f.group) { f.group.matrix.copy(f.matrix); f.group.matrixWorldNeedsUpdate = true; f.group.visible = true; }
  }

  // The world box around every posed shape but flat ones (the ground), or null.
  bounds() {
    const box = new THREE.Box3(), b = new THREE.Box3();
    for (const batch of this.batches.values()) {
      if (batch.box.isEmpty()) continue; // a mesh not arrived yet
      for (const r of batch.records) {
        if (r.flat || !r.frame.matrix) continue;
        box.union(b.copy(batch.box).applyMatrix4(this.tmp.multiplyMatrices(r.frame.matrix, r.local)));
      }
    }
    return box.isEmpty() ? null : box;
  }

  // Where a frame whose id starts with `prefix` is, if posed.
  find(prefix) {
    for (const [id, f] of this.frames) {
      if (id.startsWith(prefix) && f.matrix) return { id, position: new THREE.Vector3().setFromMatrixPosition(f.matrix) };
    }
    return null;
  }

  get drawCalls() { return this.batches.size; }
}

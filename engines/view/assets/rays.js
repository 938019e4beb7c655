// Every range sensor's rays in one line buffer (one draw call): each sensor owns a slot of the
// buffer from its first reading on, overwritten by its newer ones. At most `cap` rays: sensors
// past it are left out and counted (the status bar says so). The daemon thins rays before that
// (docs/view.md), so the cap is a guard, not the usual case.
import * as THREE from 'three';

export class Rays {
  constructor(scene, cap = 50000) {
    this.cap = cap;
    this.position = new THREE.BufferAttribute(new Float32Array(6 * cap), 3).setUsage(THREE.DynamicDrawUsage);
    this.color = new THREE.BufferAttribute(new Float32Array(6 * cap), 3).setUsage(THREE.DynamicDrawUsage);
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', this.position);
    g.setAttribute('color', this.color);
    g.setDrawRange(0, 0);
    this.mesh = new THREE.LineSegments(g, new THREE.LineBasicMaterial({ vertexColors: true, transparent: true, opacity: 0.9 }));
    this.mesh.frustumCulled = false;
    scene.add(this.mesh);
    this.slots = new Map();   // entity id -> { start, count } in points
    this.used = 0;            // points in use
    this.refused = new Map(); // entity id -> rays left out
    this.dirty = null;        // [first, end) points written since the last upload
  }

  // A sensor's rays: `count` points (two a ray) as x, y, z, r, g, b in `points`.
  update(id, points, count) {
    let slot = this.slots.get(id);
    if (!slot) {
      if (this.used + count > 2 * this.cap) { this.refused.set(id, count / 2); return; }
      slot = { start: this.used, count };
      this.slots.set(id, slot);
      this.used += count;
      this.mesh.geometry.setDrawRange(0, this.used);
    }
    const p = this.position.array, c = this.color.array, n = Math.min(count, slot.count);
    for (let k = 0; k < n; k++) {
      const src = 6 * k, dst = 3 * (slot.start + k);
      p[dst] = points[src]; p[dst + 1] = points[src + 1]; p[dst + 2] = points[src + 2];
      c[dst] = points[src + 3]; c[dst + 1] = points[src + 4]; c[dst + 2] = points[src + 5];
    }
    // Fewer rays than its slot holds: the rest collapse to nothing.
    p.fill(0, 3 * (slot.start + n), 3 * (slot.start + slot.count));
    const [a, b] = this.dirty || [Infinity, -Infinity];
    this.dirty = [Math.min(a, slot.start), Math.max(b, slot.start + slot.count)];
  }

  // A new world (a reset): every sensor's slot goes; the next readings take them anew.
  clear() {
    this.slots.clear();
    this.refused.clear();
    this.used = 0;
    this.mesh.geometry.setDrawRange(0, 0);
  }

  // Before drawing: hands the written part of the buffer to the GPU.
  upload() {
    if (!this.dirty) return;
    const [a, b] = this.dirty;
    for (const attr of [this.position, this.color]) {
      attr.clearUpdateRanges();
      attr.addUpdateRange(3 * a, 3 * (b - a));
      attr.needsUpdate = true;
    }
    this.dirty = null;
  }

  get drawn() { return this.used / 2; }
  get left() { let n = 0; for (const v of this.refused.values()) n += v; return n; }
}

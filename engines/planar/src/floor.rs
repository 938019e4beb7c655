//! The floor's Coulomb friction in a top view: gravity's downward part g presses each dynamic
//! body onto the floor, which takes up to μ·m·g off its sliding (μ: its first collider's
//! friction) and, about its centre, up to μ·m·g·k off its turning (k: its radius of gyration,
//! √(I/m), the arm at which the floor's pull on a uniform footprint acts in the mean). Applied
//! as forces for one step, from the velocity the body would have after its own forces: enough
//! to stop it, never to turn it back, so a push weaker than μ·m·g leaves a resting body at
//! rest. Contact pushes act inside the solver, after: the floor answers them at the next step.

use crate::PlanarEngine;

impl PlanarEngine {
    pub(crate) fn floor_friction(&mut self, dt: f32) {
        let g = self.floor_gravity;
        let in_plane = self.world.gravity;
        for b in &self.bodies {
            if b.floor_friction <= 0.0 {
                continue;
            }
            let rb = &mut self.world.bodies[b.handle];
            if !rb.is_dynamic() || rb.is_sleeping() {
                continue;
            }
            let m = rb.mass();
            if m <= 0.0 {
                continue;
            }
            let most = b.floor_friction * g * dt;
            // The velocity its own forces and gravity would give it; the floor takes at most
            // `most` of it.
            let coming = rb.linvel() + (rb.user_force() / m + in_plane * rb.gravity_scale()) * dt;
            let speed = coming.length();
            let i = rb.mass_properties().local_mprops.principal_inertia();
            let spin = if i > 0.0 {
                rb.angvel() + rb.user_torque() / i * dt
            } else {
                rb.angvel()
            };
            let mut forced = false;
            if speed > 0.0 {
                let dv = speed.min(most);
                rb.add_force(-coming / speed * (m * dv / dt), false);
                forced = true;
            }
            if spin != 0.0 && i > 0.0 {
                let arm = (i / m).sqrt();
                let dw = spin.abs().min(most * arm * m / i);
                rb.add_torque(-spin.signum() * i * dw / dt, false);
                forced = true;
            }
            if forced {
                self.forced.push(b.handle);
            }
        }
    }
}

// The status bar's figures, kept apart from drawing so that they can be tested alone (node's
// test runner loads this file; no three.js, no DOM).
//
// Two kinds of figure, never mixed:
// - what the simulation does, from the daemon: simulated time and step (the newest /clock or
//   /stats, whichever is later), the real-time factor and deadline misses (/stats: the change in
//   the daemon's simulated and wall time between its last two statistics);
// - what the page does: frames drawn per second, and lag, how long ago (wall time) the daemon
//   took the snapshot now on screen (the frame's "wall"; exact on one machine, off by the
//   clocks' offset on two).
// Nothing here is derived from how many transforms arrived: a page that falls behind shows a
// large lag, not a slow simulation.

export class Status {
  constructor() {
    this.episode = 0;       // resets before the world the figures are of
    this.step = null;
    this.simTime = null;
    this.rtf = null;
    this.misses = null;
    this.stats = null;      // the last /stats
    this.fps = null;
    this.frames = 0;        // animation frames drawn
    this.fpsWindow = null;  // [wall ms at its start, frames then]
    this.drawnTime = null;  // simulated time of the state on screen
    this.drawnWall = null;  // daemon's Unix time (s) when it took that state
    this.rays = null;       // { shown, total }: the daemon draws shown of total rays (thinned)
    this.pageRays = null;   // { drawn, refused }: rays in the page's buffer and left out at its cap
  }

  // A /clock message: {step, time, wall, episode}.
  clock(m) {
    if (typeof m.episode === 'number' && m.episode !== this.episode) this.restart(m.episode);
    this.newer(m.step, m.time);
  }

  // The run was reset (a /reset message, or a /clock of a new episode): its step and time start
  // over, and the real-time factor is measured from the new run's statistics.
  restart(episode) {
    this.episode = episode;
    this.step = null;
    this.simTime = null;
    this.stats = null;
    this.rtf = null;
  }

  // A /stats message: the --stats-json fields.
  onStats(s) {
    this.newer(s.steps, s.sim_time_s);
    this.misses = s.deadline_misses;
    const p = this.stats;
    const dw = p ? s.wall_time_s - p.wall_time_s : 0;
    // Over the last interval; the run's whole average until there are two.
    this.rtf = p && dw > 0.05 ? (s.sim_time_s - p.sim_time_s) / dw : s.achieved_rt_factor;
    this.stats = s;
  }

  newer(step, time) {
    if (typeof step !== 'number' || typeof time !== 'number') return;
    if (this.step == null || step >= this.step) { this.step = step; this.simTime = time; }
  }

  // The state the daemon took at simulated time `time` and Unix time `wall` is on screen.
  drawn(time, wall) {
    this.drawnTime = time;
    this.drawnWall = wall;
  }

  // An animation frame was drawn at `nowMs` (performance.now() or any monotonic ms clock).
  frame(nowMs) {
    this.frames++;
    if (!this.fpsWindow) { this.fpsWindow = [nowMs, this.frames]; return; }
    const dt = nowMs - this.fpsWindow[0];
    if (dt >= 1000) {
      this.fps = (this.frames - this.fpsWindow[1]) * 1000 / dt;
      this.fpsWindow = [nowMs, this.frames];
    }
  }

  // The daemon thins rays: it draws `shown` of `total` (the rays' entity metadata).
  onRays(shown, total) {
    this.rays = { shown, total };
  }

  // The page's own ray buffer: `drawn` rays in it, `refused` left out at its cap.
  onPageRays(drawn, refused) {
    this.pageRays = { drawn, refused };
  }

  // Lag (s) at Unix time `nowS` (Date.now() / 1000): how old the state on screen is.
  lag(nowS) {
    return this.drawnWall == null ? null : Math.max(0, nowS - this.drawnWall);
  }

  // The texts of the status bar, at Unix time `nowS`.
  texts(nowS) {
    const lag = this.lag(nowS);
    const n = x => x.toLocaleString('en');
    const parts = [];
    if (this.rays && this.rays.shown < this.rays.total) {
      parts.push(`${n(this.rays.shown)} of ${n(this.rays.total)} drawn`);
    }
    if (this.pageRays && this.pageRays.refused > 0) {
      parts.push(`page cap ${n(this.pageRays.drawn)}, ${n(this.pageRays.refused)} left out`);
    }
    const rays = parts.length ? parts.join('; ') : null;
    return {
      simtime: this.simTime == null ? '–' : this.simTime.toFixed(2) + ' s',
      step: this.step == null ? '–' : String(this.step),
      rtf: this.rtf == null ? '–' : '×' + this.rtf.toFixed(2),
      misses: this.misses == null ? '–' : String(this.misses),
      fps: this.fps == null ? '–' : this.fps.toFixed(0),
      lag: lag == null ? '–' : lag < 1 ? (1000 * lag).toFixed(0) + ' ms' : lag.toFixed(1) + ' s',
      rays,
    };
  }
}

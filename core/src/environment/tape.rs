//! The Environment's side of the tape (`crate::tape`): what the extensions answered its
//! plugins, recorded for the render engine or given again in a replay.

use super::Environment;
use crate::tape::Answer;

impl Environment {
    /// From now on the drivers' and sensors' extension calls are answered from what
    /// [`Environment::load_answers`] gives, and no extension is called: a replay of a run
    /// whose answers were recorded.
    pub fn replay_answers(&mut self) {
        self.extensions.tape.replay();
    }

    /// Replaying: the answers recorded for the coming step (`steps() + 1`), before it is taken.
    pub fn load_answers(&self, answers: Vec<Answer>) {
        self.extensions.tape.load(self.steps + 1, answers);
    }

    /// Replaying: after a step, the first call that asked something the recording does not
    /// have, or the first recorded answer no plugin asked for (the replay then differs from
    /// the run); `None` when the step asked just what the run did.
    pub fn answers_difference(&self) -> Option<String> {
        self.extensions.tape.finish_step()
    }
}

//! A policy as an ONNX file, run by tract: loaded once a file and team size in the process (the
//! worlds of a batch share it), its widths checked against the task and the drive, its
//! metadata (what `ssx.policy.export` writes) checked against the descriptor.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use tract_onnx::prelude::*;
use tract_onnx::tract_hir::infer::GenericFactoid;

/// The metadata keys `ssx.policy.export` writes (ONNX `metadata_props`).
pub const TASK_KEY: &str = "ssx.task";
/// The observation's width (a number).
pub const OBSERVATION_WIDTH_KEY: &str = "ssx.observation_width";
/// The action's fields, comma-separated (`ux,uy`).
pub const ACTION_KEY: &str = "ssx.action";

/// What a team's inference needs: the plan for `rows` observations of `width` values.
pub struct Model {
    plan: Arc<TypedRunnableModel>,
    /// The file, for messages.
    pub path: PathBuf,
    /// Observations a run takes (the team's agents).
    pub rows: usize,
    /// Values an observation.
    pub width: usize,
    /// Values an action.
    pub actions: usize,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("path", &self.path)
            .field("rows", &self.rows)
            .field("width", &self.width)
            .field("actions", &self.actions)
            .finish()
    }
}

/// What the descriptor expects of the file.
#[derive(Clone, Debug)]
pub struct Expected<'a> {
    /// The task's name.
    pub task: &'a str,
    /// Observations a run (the team's agents).
    pub rows: usize,
    /// The task's observation width.
    pub width: usize,
    /// The drive's action width and its fields' names.
    pub actions: usize,
    /// The drive's action fields.
    pub fields: &'a str,
    /// The drive's name, for messages.
    pub drive: &'a str,
}

type Key = (PathBuf, usize);

/// The models loaded in this process, by file and team size, while an instance holds them.
static LOADED: Mutex<Option<HashMap<Key, Weak<Model>>>> = Mutex::new(None);

/// The model at `path` for `expected`, loaded (or shared with another team of the process).
pub fn load(path: &Path, expected: &Expected<'_>) -> Result<Arc<Model>, String> {
    let key = (
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        expected.rows,
    );
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    let map = loaded.get_or_insert_with(HashMap::new);
    if let Some(m) = map.get(&key).and_then(Weak::upgrade) {
        check_widths(&m, expected)?;
        return Ok(m);
    }
    let m = Arc::new(open(path, expected)?);
    map.retain(|_, w| w.strong_count() > 0);
    map.insert(key, Arc::downgrade(&m));
    Ok(m)
}

fn check_widths(m: &Model, e: &Expected<'_>) -> Result<(), String> {
    if m.width != e.width {
        return Err(format!(
            "model '{}' takes observations of {} values, the {} task's are {}",
            m.path.display(),
            m.width,
            e.task,
            e.width
        ));
    }
    if m.actions != e.actions {
        return Err(format!(
            "model '{}' gives {} values an agent, the {} drive takes {} ({})",
            m.path.display(),
            m.actions,
            e.drive,
            e.actions,
            e.fields.replace(',', ", ")
        ));
    }
    Ok(())
}

/// A property of the file's metadata, if it has it.
fn property(model: &InferenceModel, key: &str) -> Option<String> {
    let t = model
        .properties
        .get(&format!("onnx.metadata_props.{key}"))?;
    t.try_as_plain_ram()
        .ok()?
        .to_scalar::<String>()
        .ok()
        .cloned()
}

fn open(path: &Path, e: &Expected<'_>) -> Result<Model, String> {
    let shown = path.display();
    std::fs::metadata(path).map_err(|err| format!("model '{shown}': cannot read: {err}"))?;
    // The shapes a file records for its values and outputs name the batch as a symbol; the
    // team size set below is what counts.
    let onnx = tract_onnx::onnx()
        .with_ignore_output_shapes(true)
        .with_ignore_value_info(true);
    let proto = onnx
        .proto_model_for_path(path)
        .map_err(|err| format!("model '{shown}' is not an ONNX model: {err}"))?;
    if proto.graph.is_none() {
        return Err(format!(
            "model '{shown}' is not an ONNX model: it has no graph"
        ));
    }
    // From the path, so that weights kept beside the file (ONNX's external data) are found.
    let mut model = onnx
        .model_for_path(path)
        .map_err(|err| format!("model '{shown}' is not an ONNX model tract can run: {err}"))?;
    if model.inputs.len() != 1 || model.outputs.len() != 1 {
        return Err(format!(
            "model '{shown}' has {} inputs and {} outputs; a policy has one of each (observations in, actions out)",
            model.inputs.len(),
            model.outputs.len()
        ));
    }
    if let Some(task) = property(&model, TASK_KEY)
        && task != e.task
    {
        return Err(format!(
            "model '{shown}' was trained on the {task} task, the descriptor names {}",
            e.task
        ));
    }
    if let Some(fields) = property(&model, ACTION_KEY)
        && fields != e.fields
    {
        return Err(format!(
            "model '{shown}' gives actions ({fields}), the {} drive takes ({})",
            e.drive, e.fields
        ));
    }
    // The observation width the file declares: its metadata, else its input's last dimension.
    let declared = match property(&model, OBSERVATION_WIDTH_KEY) {
        Some(w) => Some(w.parse::<usize>().map_err(|_| {
            format!("model '{shown}': its {OBSERVATION_WIDTH_KEY} is not a whole number: {w:?}")
        })?),
        None => {
            let fact = model
                .input_fact(0)
                .map_err(|err| format!("model '{shown}': {err}"))?;
            fact.shape.dims().last().and_then(|d| match d {
                GenericFactoid::Only(d) => d.as_i64().and_then(|v| usize::try_from(v).ok()),
                GenericFactoid::Any => None,
            })
        }
    };
    if let Some(w) = declared
        && w != e.width
    {
        return Err(format!(
            "model '{shown}' takes observations of {w} values, the {} task's are {}",
            e.task, e.width
        ));
    }
    model
        .set_input_fact(0, f32::fact([e.rows, e.width]).into())
        .map_err(|err| format!("model '{shown}': {err}"))?;
    let typed = model.into_optimized().map_err(|err| {
        format!(
            "model '{shown}' cannot take {} observations of {} values: {err}",
            e.rows, e.width
        )
    })?;
    let out = typed
        .output_fact(0)
        .map_err(|err| format!("model '{shown}': {err}"))?
        .shape
        .as_concrete()
        .map(<[usize]>::to_vec);
    let actions = match out.as_deref() {
        Some([r, a]) if *r == e.rows => *a,
        other => {
            return Err(format!(
                "model '{shown}' gives actions of shape {other:?} for {} observations; a policy gives one row an agent",
                e.rows
            ));
        }
    };
    let plan = typed
        .into_runnable()
        .map_err(|err| format!("model '{shown}': {err}"))?;
    let m = Model {
        plan,
        path: path.to_path_buf(),
        rows: e.rows,
        width: e.width,
        actions,
    };
    check_widths(&m, e)?;
    Ok(m)
}

impl Model {
    /// The actions for `obs` (rows × width), rows × actions into `out`.
    pub fn run(&self, obs: &[f32], out: &mut Vec<f32>) -> Result<(), String> {
        let input = Tensor::from_shape(&[self.rows, self.width], obs)
            .map_err(|e| format!("model '{}': {e}", self.path.display()))?;
        let result = self
            .plan
            .run(tvec!(input.into()))
            .map_err(|e| format!("model '{}' failed: {e}", self.path.display()))?;
        let view = result[0]
            .try_as_plain_ram()
            .map_err(|e| format!("model '{}': {e}", self.path.display()))?;
        let values = view.as_slice::<f32>().map_err(|e| {
            format!(
                "model '{}' gives no float32 actions: {e}",
                self.path.display()
            )
        })?;
        out.clear();
        out.extend_from_slice(values);
        Ok(())
    }
}

/* Initialisers of the tables a plugin library exports, by field name (C99 designated
 * initialisers; C++20 for C++ plugins). Fields a plugin does not name are null, which the host
 * reads as "not provided", so a plugin written with these keeps compiling, warning-free, when the
 * ABI appends fields to SsxPluginDesc or SsxPluginTable. Optional entries are added by name:
 *
 *   static const SsxPluginDesc PLUGINS[] = {
 *       SSX_DRIVER("hover_c", "holds a height", hover_create, hover_destroy, hover_step),
 *       { SSX_PLUGIN_FIELDS(SSX_KIND_SENSOR, "probe", "one reading", p_create, p_destroy, p_step),
 *         .save = p_save, .restore = p_restore },
 *   };
 *   static const SsxPluginTable TABLE = SSX_PLUGIN_TABLE(PLUGINS);
 *   const SsxPluginTable *ssx_plugin_entry(void) { return &TABLE; }
 */

/* The fields every plugin gives, for a braced initialiser that names more. */
#define SSX_PLUGIN_FIELDS(KIND, NAME, DESCRIPTION, CREATE, DESTROY, STEP) \
  .struct_size = sizeof(SsxPluginDesc), .kind = (KIND), .name = (NAME), \
  .description = (DESCRIPTION), .create = (CREATE), .destroy = (DESTROY), .step = (STEP)

/* A driver: drives one artifact. */
#define SSX_DRIVER(NAME, DESCRIPTION, CREATE, DESTROY, STEP) \
  { SSX_PLUGIN_FIELDS(SSX_KIND_DRIVER, NAME, DESCRIPTION, CREATE, DESTROY, STEP) }

/* A sensor: measures for one artifact. */
#define SSX_SENSOR(NAME, DESCRIPTION, CREATE, DESTROY, STEP) \
  { SSX_PLUGIN_FIELDS(SSX_KIND_SENSOR, NAME, DESCRIPTION, CREATE, DESTROY, STEP) }

/* An extension, with the `call` that serves drivers and sensors (may be NULL); `control` and
 * `reset` are added by name with SSX_PLUGIN_FIELDS when it has them. */
#define SSX_EXTENSION(NAME, DESCRIPTION, CREATE, DESTROY, STEP, CALL) \
  { SSX_PLUGIN_FIELDS(SSX_KIND_EXTENSION, NAME, DESCRIPTION, CREATE, DESTROY, STEP), .call = (CALL) }

/* The table of a static array of SsxPluginDesc. */
#define SSX_PLUGIN_TABLE(PLUGINS) \
  { .abi_version = SSX_ABI_VERSION, .struct_size = sizeof(SsxPluginTable), \
    .plugin_count = (uint32_t)(sizeof(PLUGINS) / sizeof((PLUGINS)[0])), .plugins = (PLUGINS) }

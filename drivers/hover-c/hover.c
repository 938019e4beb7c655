/* hover-c: an ssx driver in plain C99, written against sdk/include/ssx.h alone.
 *
 * Holds the artifact's first body at a height by a vertical force: PD on height plus gravity
 * compensation, the horizontal position left free. Descriptor: {"height": metres, "kp": 1/s^2,
 * "kd": 1/s} (kp and kd optional: 16 and 8).
 *
 * Build: cc -std=c99 -O2 -fPIC -shared -I sdk/include drivers/hover-c/hover.c -o libssx_driver_hover_c.so
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ssx.h"

typedef struct {
    const SsxHostApi *host;
    uint32_t artifact;
    double height, kp, kd;
} Hover;

/* Copies a message into the host's error buffer. */
static void fail(SsxErrorBuf *error, const char *message) {
    if (error && error->data && error->capacity > 0) {
        strncpy(error->data, message, error->capacity - 1);
        error->data[error->capacity - 1] = '\0';
    }
}

/* Finds "key": <number> in a flat JSON object; returns 1 and the number when found. */
static int number_field(const char *json, const char *key, double *out) {
    char pattern[64];
    const char *p;
    char *end;
    snprintf(pattern, sizeof pattern, "\"%s\"", key);
    p = strstr(json, pattern);
    if (!p) return 0;
    p = strchr(p + strlen(pattern), ':');
    if (!p) return 0;
    *out = strtod(p + 1, &end);
    return end != p + 1;
}

static SsxStatus hover_create(const SsxHostApi *host, const char *descriptor_json, const SsxInit *init,
                              void **instance, SsxErrorBuf *error) {
    Hover *h;
    if (!host || !descriptor_json || !init || !instance) {
        fail(error, "null argument");
        return SSX_ERR_INVALID_ARGUMENT;
    }
    /* Fields appended to SsxInit are read only when the host's record holds them. */
    if (init->struct_size >= offsetof(SsxInit, body_count) + sizeof init->body_count && init->body_count == 0) {
        fail(error, "the artifact has no body to hover");
        return SSX_ERR_PLUGIN;
    }
    h = (Hover *)calloc(1, sizeof *h);
    if (!h) {
        fail(error, "out of memory");
        return SSX_ERR_PLUGIN;
    }
    h->host = host;
    h->artifact = init->artifact;
    h->kp = 16.0;
    h->kd = 8.0;
    if (!number_field(descriptor_json, "height", &h->height)) {
        free(h);
        fail(error, "the descriptor needs \"height\" (metres)");
        return SSX_ERR_PLUGIN;
    }
    number_field(descriptor_json, "kp", &h->kp);
    number_field(descriptor_json, "kd", &h->kd);
    if (!(h->kp > 0.0) || !(h->kd > 0.0)) {
        free(h);
        fail(error, "\"kp\" and \"kd\" must be positive");
        return SSX_ERR_PLUGIN;
    }
    *instance = h;
    return SSX_OK;
}

static void hover_destroy(void *instance) { free(instance); }

static SsxStatus hover_step(void *instance, SsxCtx ctx, SsxErrorBuf *error) {
    Hover *h = (Hover *)instance;
    const SsxHostApi *api = h->host;
    SsxBodyState s;
    double mass = 0.0, g[3], force[3] = {0.0, 0.0, 0.0}, m, accel;
    uint32_t bodies = 0, b;
    SsxStatus st;

    if ((st = api->body_count(ctx, h->artifact, &bodies)) != SSX_OK) return st;
    if (bodies == 0) {
        fail(error, "the artifact has no body to hover");
        return SSX_ERR_PLUGIN;
    }
    if ((st = api->body_state(ctx, h->artifact, 0, &s)) != SSX_OK) return st;
    for (b = 0; b < bodies; ++b) {
        if ((st = api->body_mass(ctx, h->artifact, b, &m)) != SSX_OK) return st;
        mass += m;
    }
    if ((st = api->gravity(ctx, g)) != SSX_OK) return st;
    accel = h->kp * (h->height - s.position[2]) - h->kd * s.linear_velocity[2];
    force[2] = (accel - g[2]) * mass;
    return api->add_force(ctx, 0, force);
}

static const SsxPluginDesc PLUGINS[] = {
    SSX_DRIVER("hover_c", "holds a height by a vertical force (written in C)", hover_create, hover_destroy,
               hover_step),
};

static const SsxPluginTable TABLE = SSX_PLUGIN_TABLE(PLUGINS);

const SsxPluginTable *ssx_plugin_entry(void) { return &TABLE; }

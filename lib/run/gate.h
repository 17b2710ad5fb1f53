#ifndef XG_RUN_GATE_H
#define XG_RUN_GATE_H
/*
 * Private to lib/run/ (and its test driver).
 *
 * The tool gate (gate.c): a jq filter, compiled once with libjq, that
 * decides each tool call before it runs (docs/tools.md).  Its input is the
 * tool_call record {"type":"tool_call","id":ID,"name":NAME,"args":{...}},
 * and its first output decides:
 *
 *   true      the call runs
 *   false     refused, with XG_GATE_DEFAULT_REASON as the reason
 *   a string  refused, with the string as the reason the model sees
 *
 * Anything else (no output, another kind of value) or a jq error is a
 * refusal whose reason says what went wrong: a gate that fails closes.
 * A filter that does not compile is a configuration error (exit 78 at the
 * caller) with jq's own message.
 */
#include "json.h"

struct xg_gate;

#define XG_GATE_DEFAULT_REASON "the tool gate refused this call"

/*
 * Plan mode's rule as a filter: write and edit are refused, everything else
 * is allowed.  The loop evaluates it before the user's --gate, and the first
 * refusal wins.
 */
#define XG_GATE_PLAN \
	"if .name == \"write\" or .name == \"edit\" then " \
	"\"plan mode: \\(.name) is not available while planning; read, " \
	"investigate and propose the plan instead\" else true end"

/*
 * The same decision as XG_GATE_PLAN without jq: compiling any jq filter
 * costs tens of milliseconds with libjq 1.6 (its builtins are compiled each
 * time), which plan mode need not pay.  Consumes call; 1 to allow, 0 to deny
 * with *reason set (the caller frees it).
 */
int xg_gate_plan_check(jv call, char **reason);

/* The gate for filter, or NULL with *err set to jq's message (a new string
 * the caller frees). */
struct xg_gate *xg_gate_new(const char *filter, char **err);
void xg_gate_free(struct xg_gate *g);

/*
 * Decides the call (the tool_call record, consumed): 1 to allow, 0 to deny
 * with *reason set to a new string the caller frees.
 */
int xg_gate_check(struct xg_gate *g, jv call, char **reason);

/* The decision as a value, {"allow":true} or {"allow":false,"reason":R};
 * consumes call.  A NULL gate is plan mode's built-in rule. */
jv xg_gate_decide(struct xg_gate *g, jv call);

/* The tool_call record {type, id, name, args} (args consumed). */
jv xg_gate_call(const char *id, const char *name, jv args);

#endif

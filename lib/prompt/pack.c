/*
 * A pack for a request, the top of the prompt folder: which version to
 * compile (the request's NAME@VERSION, else the conversation's selection,
 * else the variant's head), loaded from the store (variant.c), compiled
 * (compile.c) with the workspace's project instructions (project.c) and
 * skills (skills.c), the SKILL.md of each skill the request names, with
 * the notices a person should see about that version; then recorded in
 * the conversation: pinned when it has no version yet, and moved when the
 * request named another one, which is the person's pick (ADR-0065: only
 * the person moves a conversation, and its file shows where it did).
 */
#include "xg.h"
#include "prompt/prompt.h"
#include "conversation.h"

/* Where the version comes from, for xg_prompt_pack. */
struct pick {
	char *name, *version;	/* version NULL: the head */
	char *head;
	char *selected;		/* the conversation's selection, NULL for none */
	int from_conversation;	/* compiling the conversation's selection */
};

static void pick_release(struct pick *pk)
{
	free(pk->name);
	free(pk->version);
	free(pk->head);
	free(pk->selected);
}

/*
 * The selection order: the request's NAME@VERSION; else the conversation's
 * last variant_change (when the request names no variant or the same one);
 * else the head of the named variant, or of default.
 */
static int pick_version(const struct xg_prompt_request *rq, struct pick *pk)
{
	char *sel = NULL;
	int rc = 0;

	memset(pk, 0, sizeof(*pk));
	if (rq->variant && (rc = xg_variant_parse_ref(rq->variant, &pk->name, &pk->version)))
		return rc;
	if (rq->conversation && (rc = xg_variant_selected(rq->conversation, &sel)))
		return rc;
	if (!pk->version && sel) {
		char *n, *v;

		if (xg_variant_parse_ref(sel, &n, &v) || !v) {
			free(n);
			free(v);
			xg_error("conversation '%s' selects '%s', which is not NAME@VERSION",
				 rq->conversation, sel);
			free(sel);
			return XG_EX_CONFIG;
		}
		if (!pk->name || !strcmp(pk->name, n)) {
			free(pk->name);
			pk->name = n;
			pk->version = v;
			pk->from_conversation = 1;
		} else {
			free(n);
			free(v);
		}
	}
	pk->selected = sel;
	if (!pk->name)
		pk->name = xg_strdup(XG_VARIANT_DEFAULT);
	return rc;
}

static void add_notice(jv *notices, char *text)
{
	*notices = jv_array_append(*notices, xg_prompt_notice(text));
	free(text);
}

/*
 * Records the version compiled in the conversation when it is not the
 * selection.  A version the request named is the person's pick (reason
 * "requested"), for this run and the next ones, with a notice when the
 * conversation was already going; else it is the first compile's pin.
 */
static int record_version(const struct xg_prompt_request *rq, const struct pick *pk,
			  jv *notices)
{
	char *ref;
	int rc, existed;

	if (!rq->conversation || pk->from_conversation)
		return 0;
	ref = xg_asprintf("%s@%s", pk->name, pk->version);
	if (pk->selected && !strcmp(ref, pk->selected)) {
		free(ref);
		return 0;
	}
	existed = xg_conv_exists(rq->conversation);
	rc = xg_variant_select(rq->conversation, ref, rq->variant ? "requested" : "first compile",
			       NULL);
	if (!rc && rq->variant && pk->selected)
		add_notice(notices, xg_asprintf("conversation '%s' moves from %s to %s, as the "
						"request asks; its later runs stay on %s",
						rq->conversation, pk->selected, ref, ref));
	else if (!rc && rq->variant && existed)
		add_notice(notices, xg_asprintf("conversation '%s' is now on %s, as the request "
						"asks; its later runs stay on %s",
						rq->conversation, ref, ref));
	free(ref);
	return rc;
}

/* The notices about the version itself: a head that moved since the
 * conversation pinned its version, a version tuned for another model. */
static int version_notices(const struct xg_prompt_request *rq, const struct pick *pk,
			   jv *notices)
{
	jv meta;
	const char *tuned;
	int rc = xg_variant_meta(pk->name, pk->version, &meta);

	if (rc)
		return rc;
	if (pk->from_conversation && pk->head && strcmp(pk->head, pk->version))
		add_notice(notices, xg_asprintf(
			"head of variant '%s' moved to %s; this conversation stays on %s@%s",
			pk->name, pk->head, pk->name, pk->version));
	tuned = xg_json_string_peek(meta, "tunedFor");
	if (tuned && rq->model && *rq->model && strcmp(tuned, rq->model))
		add_notice(notices, xg_asprintf("%s@%s is tuned for %s; this run uses %s",
						pk->name, pk->version, tuned, rq->model));
	jv_free(meta);
	return 0;
}

int xg_prompt_pack(const struct xg_prompt_request *rq, jv *pack, jv *notices)
{
	struct xg_prompt_manifest m;
	struct xg_prompt_target t;
	struct xg_prompt_project pj;
	struct xg_prompt_skills sk;
	struct pick pk;
	char *loaded = NULL, *attach = NULL;
	jv named = jv_invalid();
	const char *mode = rq->mode ? rq->mode : "normal";
	int rc;

	*pack = jv_invalid();
	memset(&m, 0, sizeof(m));
	memset(&pj, 0, sizeof(pj));
	pj.entry = jv_invalid();
	memset(&sk, 0, sizeof(sk));
	sk.entry = jv_invalid();
	if (!xg_conv_mode_valid(mode)) {
		xg_error("'%s' " XG_CONV_MODE_BAD, mode);
		return XG_EX_DATAERR;
	}
	if ((rc = pick_version(rq, &pk)))
		goto out;
	if ((rc = xg_variant_load(pk.name, pk.version, &m, &loaded, &pk.head))) {
		/* The selection is state this program wrote: it being gone is a
		 * broken installation, not bad input. */
		if (pk.from_conversation && rc == XG_EX_DATAERR) {
			xg_error("conversation '%s' is on %s@%s, which cannot be found",
				 rq->conversation, pk.name, pk.version);
			rc = XG_EX_CONFIG;
		}
		goto out;
	}
	free(pk.version);
	pk.version = loaded;
	if ((rc = version_notices(rq, &pk, notices)))
		goto out;
	t.variant = pk.name;
	t.version = pk.version;
	t.model = rq->model;
	t.mode = mode;
	/* Read once, here: every request of the run carries this text. */
	xg_prompt_project_read(rq->cwd, &pj, notices);
	xg_prompt_skills_read(rq->cwd, &sk, notices);
	t.project = &pj;
	t.skills = &sk;
	if ((rc = xg_prompt_compile(&m, &t, pack, notices)))
		goto out;
	/* What goes with the request: xg-run appends it to the text. */
	if ((attach = xg_prompt_skills_named(&sk, rq->text, &named, notices))) {
		*pack = xg_json_set(*pack, "named_skills", named);
		*pack = xg_json_set(*pack, "attach", jv_string(attach));
		named = jv_invalid();
	}
	/* Record only a version that compiled, so a broken one is not. */
	rc = record_version(rq, &pk, notices);
out:
	if (rc) {
		jv_free(*pack);
		*pack = jv_invalid();
	}
	xg_prompt_manifest_release(&m);
	xg_prompt_project_release(&pj);
	xg_prompt_skills_release(&sk);
	jv_free(named);
	free(attach);
	pick_release(&pk);
	return rc;
}

/*-------------------------------------------------------------------------
 *
 * hints.c
 *	  Hints for the errors a pgvector user meets first, which PostgreSQL's
 *	  parser and type input raise before any segvec code runs.
 *
 * An emit_log_hook adds (or, where PostgreSQL's own is generic, replaces)
 * the HINT of four errors on their way to the client:
 *
 * - malformed array literal of a text starting with '[' (pgvector's
 *   '[1,2,3]' where a real[] is expected);
 * - function l2_distance(unknown, unknown) is not unique (and the other
 *   distance functions, and the operators <->, <=>, <#> between untyped
 *   literals): both segvec and pgvector define them;
 * - type "vector" (or "halfvec") does not exist.
 *
 * Errors are recognised by SQLSTATE and untranslated message (message_id),
 * so a server in another language is recognised too; nothing else changes,
 * and the hook does nothing when the library is not loaded (with
 * shared_preload_libraries it always is).
 *
 * src/kernels/hints.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/elog.h"
#include "utils/memutils.h"

#include "kernels/distance.h"

static emit_log_hook_type prev_emit_log_hook = NULL;

/* segvec's SQL functions whose names pgvector has too */
static const char *const shared_functions[] = {
	"l2_distance", "cosine_distance", "inner_product", "l2_norm",
	"l2_normalize", NULL
};

/* Does message start with "function NAME(unknown" for a shared name? */
static const char *
shared_function(const char *message)
{
	int			i;

	if (strncmp(message, "function ", 9) != 0)
		return NULL;
	for (i = 0; shared_functions[i] != NULL; i++)
	{
		size_t		len = strlen(shared_functions[i]);

		if (strncmp(message + 9, shared_functions[i], len) == 0 &&
			strncmp(message + 9 + len, "(unknown", 8) == 0)
			return shared_functions[i];
	}
	return NULL;
}

/* The hint for edata, or NULL to leave it alone */
static char *
hint_for(ErrorData *edata)
{
	const char *id = edata->message_id;
	const char *msg = edata->message;
	const char *fn;

	if (id == NULL || msg == NULL)
		return NULL;

	if (edata->sqlerrcode == ERRCODE_INVALID_TEXT_REPRESENTATION &&
		strcmp(id, "malformed array literal: \"%s\"") == 0 &&
		strncmp(msg, "malformed array literal: \"[", 27) == 0)
		return psprintf("An array (real[], segvec's vector type) is written with braces: '{1,2,3}', or ARRAY[1,2,3]. '[1,2,3]' is the literal of pgvector's vector type.");

	if (edata->sqlerrcode == ERRCODE_AMBIGUOUS_FUNCTION &&
		strcmp(id, "function %s is not unique") == 0 &&
		(fn = shared_function(msg)) != NULL)
		return psprintf("segvec defines %s for real[], pgvector for its vector types: give an argument a type, as in %s('{1,2}'::real[], '{3,4}') or %s('[1,2]'::vector, '[3,4]').",
						fn, fn, fn);

	if (edata->sqlerrcode == ERRCODE_AMBIGUOUS_FUNCTION &&
		strcmp(id, "operator is not unique: %s") == 0 &&
		strncmp(msg, "operator is not unique: unknown ", 32) == 0 &&
		(strstr(msg, " <-> ") || strstr(msg, " <=> ") || strstr(msg, " <#> ")))
		return psprintf("More than one type has this operator (segvec's real[], PostgreSQL's geometric types, pgvector's vector types where installed): give an operand a type, as in '{1,2}'::real[].");

	if (edata->sqlerrcode == ERRCODE_UNDEFINED_OBJECT &&
		strcmp(id, "type \"%s\" does not exist") == 0 &&
		(strcmp(msg, "type \"vector\" does not exist") == 0 ||
		 strcmp(msg, "type \"halfvec\" does not exist") == 0))
		return psprintf("segvec's vectors are real[] columns, as in embedding real[]. For pgvector's vector and halfvec types, install pgvector, then CREATE EXTENSION segvec_pgvector CASCADE.");

	return NULL;
}

static void
segvec_emit_log_hook(ErrorData *edata)
{
	if (edata->elevel >= ERROR && edata->output_to_client)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(ErrorContext);
		char	   *hint = hint_for(edata);

		if (hint != NULL)
			edata->hint = hint;
		MemoryContextSwitchTo(oldcxt);
	}
	if (prev_emit_log_hook)
		prev_emit_log_hook(edata);
}

/*
 * SegvecInitHints: install the hook (at module load).
 */
void
SegvecInitHints(void)
{
	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = segvec_emit_log_hook;
}

/*
 * Prices (choices.h, xg-config(5)): the check of a model's "price" and the
 * cost of a run's tokens from it.  A price is dollars per million tokens.
 */
#include "xg.h"
#include "choices/choices.h"
#include "choices/internal.h"

static const char *const price_fields[] = { "input", "cached_input", "output", NULL };

char *xg_catalog_check_price(jv price)
{
	double v;
	int i;

	if (jv_get_kind(price) != JV_KIND_OBJECT)
		return xg_strdup("'price' must be an object: {\"input\": N, \"cached_input\": N, "
				 "\"output\": N}, dollars per million tokens");
	for (i = 0; price_fields[i]; i++) {
		jv f = xg_json_get_peek(price, price_fields[i]);
		int optional = !strcmp(price_fields[i], "cached_input");

		if (optional && (!jv_is_valid(f) || jv_get_kind(f) == JV_KIND_NULL))
			continue;
		if (xg_json_number_peek(price, price_fields[i], &v) < 0 || v < 0 || v != v)
			return xg_asprintf("'price.%s' must be a number of dollars per million "
					   "tokens, not negative", price_fields[i]);
	}
	jv_object_foreach(price, k, val) {
		int known = 0;

		for (i = 0; price_fields[i]; i++)
			known |= !strcmp(jv_string_value(k), price_fields[i]);
		if (!known) {
			char *why = xg_asprintf("'price' has no field '%s' (input, cached_input, "
						"output)", jv_string_value(k));
			jv_free(k);
			jv_free(val);
			return why;
		}
		jv_free(k);
		jv_free(val);
	}
	return NULL;
}

double xg_catalog_cost_peek(jv model, long long input, long long cached, long long output)
{
	jv price = xg_json_get_peek(model, "price");
	double pin, pcached, pout;

	if (jv_get_kind(price) != JV_KIND_OBJECT || xg_json_number_peek(price, "input", &pin) < 0 ||
	    xg_json_number_peek(price, "output", &pout) < 0)
		return -1;
	if (xg_json_number_peek(price, "cached_input", &pcached) < 0)
		pcached = pin;
	if (cached > input)
		cached = input;
	return ((double)(input - cached) * pin + (double)cached * pcached +
		(double)output * pout) / 1e6;
}

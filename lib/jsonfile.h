#ifndef XG_JSONFILE_H
#define XG_JSONFILE_H
/*
 * Small JSON files of configuration (models.json, choices.json, auth.json):
 * read whole and parsed, with errors that name the file and the line.
 *
 * Parse errors are reported with xg_json_parse_error, which never quotes
 * the text, since a file may hold a key.
 */
#include "json.h"

#define XG_JSONFILE_MAX ((size_t)4 << 20)

/*
 * Reads path into *out: an object when the file was read, jv_null() when it
 * does not exist.  Returns 0 for both, or an exit code after reporting:
 * 78 for text that is not a JSON object (naming the line), 74 when it
 * cannot be read.
 */
int xg_jsonfile_read(const char *path, jv *out);
/* The same for text already read (len bytes, named path in messages): 0 and
 * *out set, or 78 after reporting. */
int xg_jsonfile_parse(const char *path, const char *text, size_t len, jv *out);

#endif

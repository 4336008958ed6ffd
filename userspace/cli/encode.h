/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text as the CLI shows it: JSON through json-c, XML through libxml2's
 * writer, and on a terminal or in a text column, with what is not a
 * printable character escaped.  The strings of a log (mark labels) and of
 * a checker (its output) are bytes, not UTF-8: the encoders see only
 * text that cli_escape() made valid first.
 */
#ifndef FLUSHLOG_ENCODE_H
#define FLUSHLOG_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json.h>
#include <libxml/xmlwriter.h>

/*
 * cli_escape() shows each byte that is not part of valid UTF-8 as \xNN;
 * with ESC_CONTROL, the bytes of control characters too (C0, DEL, C1,
 * and U+FFFE and U+FFFF, which XML forbids), but with ESC_KEEP_LINES not
 * newline and tab.  cli_unescape() turns \xNN back into bytes.
 */
#define ESC_CONTROL	(1U << 0)
#define ESC_KEEP_LINES	(1U << 1)

/* The escaped text, allocated; NULL if out of memory. */
char *cli_escape(const char *s, size_t len, unsigned int how);
/* s escaped with ESC_CONTROL, for a terminal or a text column. */
void cli_print_escaped(FILE *out, const char *s);
/* s with each \xNN made a byte again, allocated; NULL if out of memory. */
char *cli_unescape(const char *s);
/*
 * How many of the len bytes of s to keep, at most max: max, or less so
 * as not to end inside a UTF-8 character.
 */
size_t cli_utf8_cut(const char *s, size_t len, size_t max);

/* A JSON string of s, its invalid UTF-8 escaped; NULL if out of memory. */
struct json_object *cli_json_string(const char *s);
/* Add val (NULL: out of memory) to obj: 0, or -1 with val released. */
int cli_json_add(struct json_object *obj, const char *key,
		 struct json_object *val);
/* A JSON null member (json-c writes a NULL value as null). */
int cli_json_add_null(struct json_object *obj, const char *key);
/* obj on one line, no white space; the text belongs to obj, NULL if none. */
const char *cli_json_text(struct json_object *obj);
/* obj on one line of out; -1 if out of memory. */
int cli_json_print(FILE *out, struct json_object *obj);

/*
 * An XML document written to out (which stays the caller's), indented;
 * cli_xml_end() finishes and frees it: -1 if anything failed on the way,
 * for every writer call is checked by the one at the end.
 */
xmlTextWriterPtr cli_xml_start(FILE *out);
int cli_xml_end(xmlTextWriterPtr w, bool failed);
/* An attribute or a text node of any bytes, escaped with ESC_CONTROL. */
int cli_xml_attr(xmlTextWriterPtr w, const char *name, const char *value);
int cli_xml_text(xmlTextWriterPtr w, const char *s, size_t len,
		 unsigned int how);

#endif /* FLUSHLOG_ENCODE_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * Escaping, and the JSON and XML writers of the CLI.
 *
 * A mark label is whatever bytes the user sent with the dm message, and a
 * checker writes whatever it likes: neither need be UTF-8, and JSON and
 * XML are made of Unicode characters.  Each byte that is not part of a
 * valid UTF-8 sequence is shown as the four characters \xNN, which
 * cli_unescape() reads back, so that a spec copied from any output names
 * the same mark.  Where the text goes to a terminal, a text column or XML
 * (which has no way to say most control characters at all), control
 * characters are shown the same way: a label cannot move the cursor or
 * recolour the screen.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "encode.h"

/*
 * The length of the valid UTF-8 sequence at s (RFC 3629: shortest form,
 * no surrogates, nothing past U+10FFFF), its code point in *cp; 0 if the
 * byte at s starts none.
 */
static size_t
utf8_char(const unsigned char *s, size_t len, uint32_t *cp)
{
	static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t n;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (n > len)
		return 0;
	*cp = s[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	if (*cp < min[n] || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return n;
}

static bool
is_control(uint32_t cp, unsigned int how)
{
	if ((how & ESC_KEEP_LINES) && (cp == '\n' || cp == '\t'))
		return false;
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	       cp == 0xfffe || cp == 0xffff;
}

char *
cli_escape(const char *s, size_t len, unsigned int how)
{
	const unsigned char *in = (const unsigned char *)s;
	char *out = malloc(4 * len + 1), *o = out;
	size_t i = 0, n;
	uint32_t cp;

	if (!out)
		return NULL;
	while (i < len) {
		n = utf8_char(in + i, len - i, &cp);
		if (n && !((how & ESC_CONTROL) && is_control(cp, how))) {
			o = mempcpy(o, in + i, n);
			i += n;
			continue;
		}
		for (size_t end = i + (n ? n : 1); i < end; i++)
			o += sprintf(o, "\\x%02X", in[i]);
	}
	*o = '\0';
	return out;
}

void
cli_print_escaped(FILE *out, const char *s)
{
	char *text = cli_escape(s, strlen(s), ESC_CONTROL);

	fputs(text ? text : "?", out);
	free(text);
}

static int
hex_value(char c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

char *
cli_unescape(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	while (*s) {
		if (s[0] == '\\' && s[1] == 'x' && hex_value(s[2]) >= 0 &&
		    hex_value(s[3]) >= 0) {
			*o++ = (char)(hex_value(s[2]) << 4 | hex_value(s[3]));
			s += 4;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	return out;
}

struct json_object *
cli_json_string(const char *s)
{
	char *text = cli_escape(s, strlen(s), 0);
	struct json_object *str;

	if (!text)
		return NULL;
	str = json_object_new_string(text);
	free(text);
	return str;
}

int
cli_json_add(struct json_object *obj, const char *key, struct json_object *val)
{
	if (!val)
		return -1;
	if (json_object_object_add(obj, key, val)) {
		json_object_put(val);
		return -1;
	}
	return 0;
}

int
cli_json_add_null(struct json_object *obj, const char *key)
{
	return json_object_object_add(obj, key, NULL) ? -1 : 0;
}

const char *
cli_json_text(struct json_object *obj)
{
	return json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
}

int
cli_json_print(FILE *out, struct json_object *obj)
{
	const char *text = obj ? cli_json_text(obj) : NULL;

	if (!text)
		return -1;
	fputs(text, out);
	fputc('\n', out);
	return 0;
}

xmlTextWriterPtr
cli_xml_start(FILE *out)
{
	xmlOutputBufferPtr buf = xmlOutputBufferCreateFile(out, NULL);
	xmlTextWriterPtr w;

	if (!buf)
		return NULL;
	w = xmlNewTextWriter(buf);	/* owns buf from here */
	if (!w) {
		xmlOutputBufferClose(buf);
		return NULL;
	}
	if (xmlTextWriterSetIndent(w, 1) < 0 ||
	    xmlTextWriterSetIndentString(w, BAD_CAST "  ") < 0 ||
	    xmlTextWriterStartDocument(w, NULL, "UTF-8", NULL) < 0) {
		xmlFreeTextWriter(w);
		return NULL;
	}
	return w;
}

int
cli_xml_end(xmlTextWriterPtr w, bool failed)
{
	if (!w)
		return -1;
	if (xmlTextWriterEndDocument(w) < 0 || xmlTextWriterFlush(w) < 0)
		failed = true;
	xmlFreeTextWriter(w);
	return failed ? -1 : 0;
}

int
cli_xml_attr(xmlTextWriterPtr w, const char *name, const char *value)
{
	char *text = cli_escape(value, strlen(value), ESC_CONTROL);
	int ret;

	if (!text)
		return -1;
	ret = xmlTextWriterWriteAttribute(w, BAD_CAST name, BAD_CAST text);
	free(text);
	return ret < 0 ? -1 : 0;
}

int
cli_xml_text(xmlTextWriterPtr w, const char *s, size_t len, unsigned int how)
{
	char *text = cli_escape(s, len, how | ESC_CONTROL);
	int ret;

	if (!text)
		return -1;
	ret = xmlTextWriterWriteString(w, BAD_CAST text);
	free(text);
	return ret < 0 ? -1 : 0;
}

size_t
cli_utf8_cut(const char *s, size_t len, size_t max)
{
	size_t cut = max;

	if (len <= max)
		return len;
	/* s[cut] continues a character that began before it: cut there */
	while (cut > 0 && max - cut < 3 && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut--;
	return ((unsigned char)s[cut] & 0xc0) == 0x80 ? max : cut;
}

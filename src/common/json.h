/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * UTF-8 sequences and JSON strings for text that may hold any byte: the
 * CLI's printer (`info --json`, escaped names) and the agent's audit log.
 */
#ifndef MS_JSON_H
#define MS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/**
 * ms_utf8_len() - the length of the valid UTF-8 sequence at @s (RFC 3629,
 * 4) within @len bytes: 2 to 4, or 0 when there is none (an ASCII byte, a
 * bad or cut sequence, an overlong form, a surrogate, past U+10FFFF).
 */
size_t ms_utf8_len(const unsigned char *s, size_t len);

/**
 * ms_json_put_str() - @p, @len as a JSON string with its quotes (RFC 8259,
 * 7) on @f: quotes, backslashes, control characters and C1 controls
 * escaped (the JSON may be shown on a terminal), valid UTF-8 kept, any
 * other byte (a path need not be UTF-8) as U+FFFD.
 */
void ms_json_put_str(FILE *f, const uint8_t *p, size_t len);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Rows in PostgreSQL's COPY text format, built in memory for one
 * `COPY ... FROM STDIN`: columns separated by tabs, rows by newlines, NULL
 * as \N, and backslash, tab, newline and carriage return escaped, so no
 * value can end a column or a row early. Values are written in the order
 * of the COPY's column list; the buffer keeps no schema.
 */
#ifndef SBX_COPYBUF_H
#define SBX_COPYBUF_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

typedef struct sbx_copybuf_s {
        char *buf;
        size_t len, cap;
        size_t rows;
        int in_row; /* a column was written since the last row ended */
} sbx_copybuf_t;

/** Empties @p b, keeping its memory. */
void sbx_copybuf_reset(sbx_copybuf_t *b);
/** Frees @p b's memory (the struct itself is the caller's). */
void sbx_copybuf_free(sbx_copybuf_t *b);

/** A text column; NULL is SQL NULL. */
void sbx_copy_str(sbx_copybuf_t *b, const char *s);
void sbx_copy_int(sbx_copybuf_t *b, int64_t v);
/** A double with every digit needed to read the same value back. */
void sbx_copy_num(sbx_copybuf_t *b, double v);
void sbx_copy_bool(sbx_copybuf_t *b, int v);
/**
 * A timestamptz from µs since the epoch (UTC), clamped to years
 * 1970..9999 so that any value from the log is one PostgreSQL takes.
 */
void sbx_copy_time(sbx_copybuf_t *b, int64_t us);
/**
 * A jsonb column from @p j (borrowed; NULL is SQL NULL). jsonb refuses
 * the character U+0000, which Avro strings and bytes may hold: it is
 * written as U+FFFD.
 */
void sbx_copy_json(sbx_copybuf_t *b, const json_t *j);
/** Ends the current row. */
void sbx_copy_end(sbx_copybuf_t *b);

#endif

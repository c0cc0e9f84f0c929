/* assay.io._coco_native: the compiled path of assay's COCO reader.
 *
 * scan_results(data: bytes)
 *     A COCO results file (a JSON list of objects) read straight into columns, with no
 *     Python object per result: when every result has integer image_id and category_id, a
 *     number score and either a 4-number bbox, a compressed RLE segmentation
 *     ({"size": [h, w], "counts": "..."}), or both (the same fields in every result), it
 *     returns (n, image_id, category_id, score, bbox, counts, ends, sizes, areas): int64 /
 *     float64 arrays as bytes in native byte order (bbox, counts, ends, sizes, areas None
 *     when the results carry none), counts being every mask's counts text joined, ends each
 *     mask's end in it, areas each mask's pixel count as counts_area computes it (NaN for a
 *     corrupt mask). Anything else, invalid JSON included, gives None: the caller then reads the
 *     file with its general reader, which names the problem. Unknown keys are skipped (as
 *     msgspec skips them); a key given twice gives None.
 *
 * counts_area(data: bytes, ends: bytes, hw: bytes)
 *     The pixel counts (float64, as bytes) of compressed RLE masks whose counts are joined
 *     in data (mask i ends at ends[i], int64) with sizes hw (int64 pairs h, w), decoded as
 *     pycocotools' rleFrString decodes them; None when any mask could not be used safely by
 *     pycocotools (a character outside the alphabet, an unfinished run, a run of more than
 *     7 characters, a negative run, runs that do not add up to h * w): the caller's numpy
 *     path then names the mask and the reason.
 *
 * Both are exact equivalents of assay's pure-Python path (assay.io.coco_columns,
 * assay.io.rle_counts), which is used when this module is not built or ASSAY_NO_NATIVE is
 * set; the tests run both. Numbers are converted exactly: a decimal of at most 15 digits
 * with a power of ten up to 22 is one correctly rounded multiplication or division (both
 * operands exact); any other goes to Python's own correctly rounded PyOS_string_to_double.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ growable buffers */

typedef struct {
    char *p;
    size_t len, cap;
} Buf;

static int buf_reserve(Buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 1 << 12;
    while (cap < b->len + extra) cap *= 2;
    char *q = (char *)realloc(b->p, cap);
    if (q == NULL) return -1;
    b->p = q;
    b->cap = cap;
    return 0;
}

static int buf_put(Buf *b, const void *src, size_t n) {
    if (n == 0) return 0; /* (an empty buffer has no memory yet: memcpy must not see NULL) */
    if (buf_reserve(b, n) < 0) return -1;
    memcpy(b->p + b->len, src, n);
    b->len += n;
    return 0;
}

static PyObject *buf_bytes(Buf *b) {
    return PyBytes_FromStringAndSize(b->p ? b->p : "", (Py_ssize_t)b->len);
}

/* ------------------------------------------------------------------ the scanner */

/* Outcomes of a parse step: go on, the input is not of the shape read here (or not valid
 * JSON: the caller's general reader decides), or out of memory. */
enum { OK = 0, NOPE = 1, NOMEM = -1 };

#define MAX_DEPTH 64

typedef struct {
    const unsigned char *p, *end;
} Cursor;

static void skip_ws(Cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t'))
        c->p++;
}

static int expect(Cursor *c, unsigned char ch) {
    skip_ws(c);
    if (c->p >= c->end || *c->p != ch) return NOPE;
    c->p++;
    return OK;
}

static int is_digit(unsigned char ch) { return ch >= '0' && ch <= '9'; }

/* A JSON number token (RFC 8259 grammar) at the cursor: its extent, whether it is an
 * integer (no fraction, no exponent). What follows it is checked by the caller's grammar
 * ("01" fails there: a value cannot be followed by "1"). */
static int number_token(Cursor *c, const unsigned char **start, int *is_int) {
    const unsigned char *q = c->p, *end = c->end;
    *start = q;
    *is_int = 1;
    if (q < end && *q == '-') q++;
    if (q >= end) return NOPE;
    if (*q == '0') {
        q++;
    } else if (*q >= '1' && *q <= '9') {
        while (q < end && is_digit(*q)) q++;
    } else {
        return NOPE;
    }
    if (q < end && *q == '.') {
        q++;
        if (q >= end || !is_digit(*q)) return NOPE;
        while (q < end && is_digit(*q)) q++;
        *is_int = 0;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < end && (*q == '+' || *q == '-')) q++;
        if (q >= end || !is_digit(*q)) return NOPE;
        while (q < end && is_digit(*q)) q++;
        *is_int = 0;
    }
    c->p = q;
    return OK;
}

static int read_int64(Cursor *c, int64_t *out) {
    const unsigned char *s;
    int is_int;
    skip_ws(c);
    if (number_token(c, &s, &is_int) != OK || !is_int) return NOPE;
    int neg = *s == '-';
    if (neg) s++;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX, v = 0;
    for (; s < c->p; s++) {
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (limit - d) / 10u) return NOPE; /* does not fit in 64 bits */
        v = v * 10u + d;
    }
    *out = neg ? (int64_t)(0u - v) : (int64_t)v;
    return OK;
}

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                               1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                               1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The double nearest the decimal token [s, e): exact fast path, else Python's dtoa. */
static int to_double(const unsigned char *s, const unsigned char *e, double *out) {
#if FLT_EVAL_METHOD == 0
    const unsigned char *q = s;
    int neg = *q == '-';
    if (neg) q++;
    uint64_t m = 0;
    int digits = 0, exp10 = 0, fast = 1;
    for (; q < e && is_digit(*q); q++) {
        if (m || *q != '0') digits++;
        m = m * 10u + (uint64_t)(*q - '0');
        if (digits > 15) { fast = 0; break; }
    }
    if (fast && q < e && *q == '.') {
        for (q++; q < e && is_digit(*q); q++) {
            if (m || *q != '0') digits++;
            m = m * 10u + (uint64_t)(*q - '0');
            exp10--;
            if (digits > 15) { fast = 0; break; }
        }
    }
    if (fast && q < e) { /* an exponent */
        q++;
        int eneg = 0;
        if (*q == '+' || *q == '-') eneg = *q++ == '-';
        int x = 0;
        for (; q < e; q++) {
            x = x * 10 + (*q - '0');
            if (x > 400) { fast = 0; break; }
        }
        exp10 += eneg ? -x : x;
    }
    if (fast && exp10 >= -22 && exp10 <= 22) {
        double v = (double)m; /* exact: m < 10^15 < 2^53 */
        v = exp10 < 0 ? v / POW10[-exp10] : v * POW10[exp10];
        *out = neg ? -v : v;
        return OK;
    }
#endif
    char *stop = NULL;
    double v = PyOS_string_to_double((const char *)s, &stop, NULL);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return NOPE;
    }
    if ((const unsigned char *)stop != e) return NOPE;
    *out = v;
    return OK;
}

/* A number as msgspec decodes it into a float: an integer token is an integer first, so
 * "-0" is +0.0; a value that overflows a double gives NOPE (msgspec refuses it). */
static int read_double(Cursor *c, double *out) {
    const unsigned char *s;
    int is_int;
    skip_ws(c);
    if (number_token(c, &s, &is_int) != OK || to_double(s, c->p, out) != OK) return NOPE;
    if (!isfinite(*out)) return NOPE;
    if (is_int && *out == 0.0) *out = 0.0; /* "-0" */
    return OK;
}

static int hexval(unsigned char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* A JSON string at the cursor (after its opening quote); its ASCII content is appended to
 * out when out is not NULL. An escape of a character outside ASCII, a raw control
 * character or (when out is not NULL) a byte outside ASCII gives NOPE. */
/* Bytes that end a plain run of string text: the quote, the backslash, control characters
 * (1), and bytes outside ASCII (2: text of a string that is kept must be ASCII). */
static unsigned char STOP[256];

static void init_stop(void) {
    for (int ch = 0; ch < 256; ch++)
        STOP[ch] = (unsigned char)(ch == '"' || ch == '\\' || ch < 0x20 ? 1 : ch >= 0x80 ? 2 : 0);
}

static int string_body(Cursor *c, Buf *out) {
    const unsigned char stop = out == NULL ? 1 : 3;
    for (;;) {
        const unsigned char *run = c->p;
        while (c->p < c->end && !(STOP[*c->p] & stop)) c->p++;
        if (out != NULL && buf_put(out, run, (size_t)(c->p - run)) < 0) return NOMEM;
        if (c->p >= c->end) return NOPE;
        unsigned char ch = *c->p++;
        if (ch == '"') return OK;
        if (ch != '\\') return NOPE; /* a control character (or non-ASCII text) */
        if (c->p >= c->end) return NOPE;
        unsigned char e = *c->p++, v;
        switch (e) {
        case '"': v = '"'; break;
        case '\\': v = '\\'; break;
        case '/': v = '/'; break;
        case 'b': v = '\b'; break;
        case 'f': v = '\f'; break;
        case 'n': v = '\n'; break;
        case 'r': v = '\r'; break;
        case 't': v = '\t'; break;
        case 'u': {
            if (c->end - c->p < 4) return NOPE;
            int code = 0;
            for (int k = 0; k < 4; k++) {
                int h = hexval(c->p[k]);
                if (h < 0) return NOPE;
                code = code * 16 + h;
            }
            c->p += 4;
            if (out != NULL && code >= 0x80) return NOPE;
            if (code >= 0xDC00 && code <= 0xDFFF) return NOPE; /* a lone low surrogate */
            if (code >= 0xD800 && code <= 0xDBFF) { /* must pair with a low one (msgspec) */
                if (c->end - c->p < 6 || c->p[0] != '\\' || c->p[1] != 'u') return NOPE;
                int low = 0;
                for (int k = 2; k < 6; k++) {
                    int h = hexval(c->p[k]);
                    if (h < 0) return NOPE;
                    low = low * 16 + h;
                }
                if (low < 0xDC00 || low > 0xDFFF) return NOPE;
                c->p += 6;
            }
            v = (unsigned char)(code & 0x7f);
            break;
        }
        default: return NOPE;
        }
        if (out != NULL && buf_put(out, &v, 1) < 0) return NOMEM;
    }
}

/* A key (plain ASCII, no escape) and the colon after it: its extent in [*k, *k + *n). */
static int key(Cursor *c, const unsigned char **k, size_t *n) {
    if (expect(c, '"') != OK) return NOPE;
    *k = c->p;
    while (c->p < c->end && *c->p != '"' && *c->p != '\\' && *c->p >= 0x20 && *c->p < 0x80)
        c->p++;
    if (c->p >= c->end || *c->p != '"') return NOPE;
    *n = (size_t)(c->p - *k);
    c->p++;
    return expect(c, ':');
}

static int key_is(const unsigned char *k, size_t n, const char *name) {
    return strlen(name) == n && memcmp(k, name, n) == 0;
}

static int skip_value(Cursor *c, int depth);

/* The members of an object or array (after its opening bracket), each skipped. */
static int skip_members(Cursor *c, int depth, unsigned char close, int keyed) {
    skip_ws(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        return OK;
    }
    for (;;) {
        if (keyed) {
            if (expect(c, '"') != OK) return NOPE;
            int r = string_body(c, NULL);
            if (r != OK) return r;
            if (expect(c, ':') != OK) return NOPE;
        }
        int r = skip_value(c, depth + 1);
        if (r != OK) return r;
        skip_ws(c);
        if (c->p >= c->end) return NOPE;
        unsigned char ch = *c->p++;
        if (ch == close) return OK;
        if (ch != ',') return NOPE;
    }
}

static int literal(Cursor *c, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return NOPE;
    c->p += n;
    return OK;
}

/* Any JSON value, validated and skipped (nesting deeper than MAX_DEPTH gives NOPE). */
static int skip_value(Cursor *c, int depth) {
    if (depth > MAX_DEPTH) return NOPE;
    skip_ws(c);
    if (c->p >= c->end) return NOPE;
    switch (*c->p) {
    case '"': c->p++; return string_body(c, NULL);
    case '{': c->p++; return skip_members(c, depth, '}', 1);
    case '[': c->p++; return skip_members(c, depth, ']', 0);
    case 't': return literal(c, "true");
    case 'f': return literal(c, "false");
    case 'n': return literal(c, "null");
    default: {
        const unsigned char *s;
        int is_int;
        return number_token(c, &s, &is_int);
    }
    }
}

typedef struct {
    Buf img, cat, score, bbox, counts, ends, sizes, areas;
    int has_bbox, has_segm; /* -1 until the first result decides */
} Columns;

/* After a member: a comma (another member follows: 1) or the closing bracket (0). */
static int next_member(Cursor *c, unsigned char close, int *more) {
    skip_ws(c);
    if (c->p >= c->end) return NOPE;
    unsigned char ch = *c->p++;
    if (ch == ',') {
        *more = 1;
        return OK;
    }
    *more = 0;
    return ch == close ? OK : NOPE;
}

static int64_t mask_area(const unsigned char *s, const unsigned char *e, int64_t size);

/* h * w in 64 bits, wrapping as numpy's int64 product does (the pure path's raster size: a
 * mask checked against a size that wrapped below zero is refused by both). */
static int64_t wrapped_product(int64_t h, int64_t w) {
    return (int64_t)((uint64_t)h * (uint64_t)w);
}

/* {"size": [h, w], "counts": "..."} (in either order; other keys skipped), with the mask's
 * pixel count (NaN when its counts are corrupt: the caller's numpy path names it). */
static int segmentation(Cursor *c, Columns *o) {
    if (expect(c, '{') != OK) return NOPE;
    int seen_size = 0, seen_counts = 0, more = 1;
    int64_t hw[2] = {0, 0};
    size_t from = 0;
    skip_ws(c);
    if (c->p < c->end && *c->p == '}') return NOPE;
    while (more) {
        const unsigned char *k;
        size_t n;
        if (key(c, &k, &n) != OK) return NOPE;
        if (key_is(k, n, "size")) {
            if (seen_size++ || expect(c, '[') != OK || read_int64(c, &hw[0]) != OK ||
                expect(c, ',') != OK || read_int64(c, &hw[1]) != OK || expect(c, ']') != OK)
                return NOPE;
            if (buf_put(&o->sizes, hw, sizeof hw) < 0) return NOMEM;
        } else if (key_is(k, n, "counts")) {
            if (seen_counts++ || expect(c, '"') != OK) return NOPE;
            from = o->counts.len;
            int r = string_body(c, &o->counts);
            if (r != OK) return r;
            int64_t at = (int64_t)o->counts.len;
            if (buf_put(&o->ends, &at, sizeof at) < 0) return NOMEM;
        } else {
            int r = skip_value(c, 1);
            if (r != OK) return r;
        }
        if (next_member(c, '}', &more) != OK) return NOPE;
    }
    if (!seen_size || !seen_counts) return NOPE;
    const unsigned char *text = (const unsigned char *)o->counts.p;
    int64_t h = hw[0], w = hw[1];
    int64_t a = mask_area(text + from, text + o->counts.len, wrapped_product(h, w));
    double area = a < 0 ? NAN : (double)a;
    return buf_put(&o->areas, &area, sizeof area) < 0 ? NOMEM : OK;
}

enum { F_IMG = 1, F_CAT = 2, F_SCORE = 4, F_BBOX = 8, F_SEGM = 16 };

static int result(Cursor *c, Columns *o) {
    if (expect(c, '{') != OK) return NOPE;
    int seen = 0, more = 1;
    skip_ws(c);
    if (c->p < c->end && *c->p == '}') return NOPE;
    while (more) {
        const unsigned char *k;
        size_t n;
        int field = 0, r = OK;
        if (key(c, &k, &n) != OK) return NOPE;
        if (key_is(k, n, "image_id")) field = F_IMG;
        else if (key_is(k, n, "category_id")) field = F_CAT;
        else if (key_is(k, n, "score")) field = F_SCORE;
        else if (key_is(k, n, "bbox")) field = F_BBOX;
        else if (key_is(k, n, "segmentation")) field = F_SEGM;
        if (field & seen) return NOPE; /* a key given twice */
        seen |= field;
        if (field == F_IMG || field == F_CAT) {
            int64_t v;
            if (read_int64(c, &v) != OK) return NOPE;
            if (buf_put(field == F_IMG ? &o->img : &o->cat, &v, sizeof v) < 0) return NOMEM;
        } else if (field == F_SCORE) {
            double v;
            if (read_double(c, &v) != OK) return NOPE;
            if (buf_put(&o->score, &v, sizeof v) < 0) return NOMEM;
        } else if (field == F_BBOX) {
            double b[4];
            if (expect(c, '[') != OK) return NOPE;
            for (int j = 0; j < 4; j++) {
                if ((j && expect(c, ',') != OK) || read_double(c, &b[j]) != OK) return NOPE;
            }
            if (expect(c, ']') != OK) return NOPE;
            if (buf_put(&o->bbox, b, sizeof b) < 0) return NOMEM;
        } else if (field == F_SEGM) {
            r = segmentation(c, o);
        } else {
            r = skip_value(c, 1);
        }
        if (r != OK) return r;
        if (next_member(c, '}', &more) != OK) return NOPE;
    }
    if ((seen & (F_IMG | F_CAT | F_SCORE)) != (F_IMG | F_CAT | F_SCORE)) return NOPE;
    int box = (seen & F_BBOX) != 0, segm = (seen & F_SEGM) != 0;
    if (o->has_bbox < 0) {
        o->has_bbox = box;
        o->has_segm = segm;
    }
    return box == o->has_bbox && segm == o->has_segm ? OK : NOPE;
}

static int results(Cursor *c, Columns *o) {
    if (expect(c, '[') != OK) return NOPE;
    int more = 1;
    while (more) {
        int r = result(c, o);
        if (r != OK) return r;
        if (next_member(c, ']', &more) != OK) return NOPE;
    }
    skip_ws(c);
    return c->p == c->end ? OK : NOPE;
}

static void columns_free(Columns *o) {
    Buf *all[] = {&o->img,    &o->cat,  &o->score, &o->bbox,
                  &o->counts, &o->ends, &o->sizes, &o->areas};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]->p);
}

static PyObject *scan_results(PyObject *self, PyObject *arg) {
    (void)self;
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "scan_results takes bytes");
        return NULL;
    }
    Cursor c = {(const unsigned char *)PyBytes_AS_STRING(arg), NULL};
    c.end = c.p + PyBytes_GET_SIZE(arg);
    Columns o;
    memset(&o, 0, sizeof o);
    o.has_bbox = o.has_segm = -1;
    int r = results(&c, &o);
    if (r == NOMEM) {
        columns_free(&o);
        return PyErr_NoMemory();
    }
    if (r != OK || (!o.has_bbox && !o.has_segm)) {
        columns_free(&o);
        Py_RETURN_NONE;
    }
    Py_ssize_t n = (Py_ssize_t)(o.img.len / sizeof(int64_t));
    Buf *parts[] = {&o.img, &o.cat, &o.score, &o.bbox, &o.counts, &o.ends, &o.sizes, &o.areas};
    int given[] = {1, 1, 1, o.has_bbox, o.has_segm, o.has_segm, o.has_segm, o.has_segm};
    PyObject *out = PyTuple_New(9);
    for (int j = 0; out != NULL && j < 9; j++) {
        PyObject *v = j == 0 ? PyLong_FromSsize_t(n)
                             : given[j - 1] ? buf_bytes(parts[j - 1]) : Py_NewRef(Py_None);
        if (v == NULL) Py_CLEAR(out);
        else PyTuple_SET_ITEM(out, j, v);
    }
    columns_free(&o);
    return out;
}

/* ------------------------------------------------------------------ RLE areas */

/* The next run of compressed counts at *s (before e), as pycocotools' rleFrString reads it:
 * 6-bit characters offset by 48, bit 0x20 = more characters follow, 5 more bits each (the
 * first the lowest), the last character's bit 0x10 the sign. The value is the run itself
 * or (from the fourth run on) its difference from the run two places earlier: the caller
 * adds that. -1 for a character outside the alphabet, an unfinished run, or a run of more
 * than 7 characters. */
static int next_run(const unsigned char **s, const unsigned char *e, int64_t *out) {
    int64_t x = 0;
    int k = 0, more = 1;
    while (more) {
        if (*s >= e || k == 7) return -1;
        int ch = *(*s)++;
        if (ch < 48 || ch > 111) return -1;
        ch -= 48;
        x |= (int64_t)(ch & 0x1f) << (5 * k);
        more = ch & 0x20;
        k++;
        if (!more && (ch & 0x10)) x -= (int64_t)1 << (5 * k);
    }
    *out = x;
    return 0;
}

/* The pixel count of one mask's compressed counts [s, e) of size h * w; -1 if corrupt. */
static int64_t mask_area(const unsigned char *s, const unsigned char *e, int64_t size) {
    int64_t prev2 = 0, prev1 = 0, total = 0, area = 0;
    int64_t m = 0; /* runs so far */
    while (s < e) {
        int64_t x;
        if (next_run(&s, e, &x) < 0) return -1;
        if (m > 2) x += prev2;
        if (x < 0) return -1;
        total += x;
        if (total > size) return -1;
        if (m & 1) area += x;
        prev2 = prev1;
        prev1 = x;
        m++;
    }
    return total == size ? area : -1;
}

static PyObject *counts_area(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data, ends, hw;
    if (!PyArg_ParseTuple(args, "y*y*y*", &data, &ends, &hw)) return NULL;
    PyObject *out = NULL;
    Py_ssize_t n = ends.len / (Py_ssize_t)sizeof(int64_t);
    if (ends.len % (Py_ssize_t)sizeof(int64_t) || hw.len != 2 * ends.len) {
        PyErr_SetString(PyExc_ValueError, "counts_area: ends and hw do not match");
        goto done;
    }
    out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(double));
    if (out == NULL) goto done;
    const int64_t *end_at = (const int64_t *)ends.buf, *sz = (const int64_t *)hw.buf;
    const unsigned char *text = (const unsigned char *)data.buf;
    double *area = (double *)PyBytes_AS_STRING(out);
    int64_t start = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t stop = end_at[i], h = sz[2 * i], w = sz[2 * i + 1];
        if (stop < start || stop > (int64_t)data.len) {
            Py_CLEAR(out);
            PyErr_SetString(PyExc_ValueError, "counts_area: ends out of range");
            goto done;
        }
        int64_t a = mask_area(text + start, text + stop, wrapped_product(h, w));
        if (a < 0) { /* the numpy path names the mask and the reason */
            Py_CLEAR(out);
            out = Py_NewRef(Py_None);
            goto done;
        }
        area[i] = (double)a;
        start = stop;
    }
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&ends);
    PyBuffer_Release(&hw);
    return out;
}

/* rle_dicts(data, ends, sizes): [{"size": sizes[i], "counts": data[ends[i-1]:ends[i]]}]
 * (the counts as bytes, the size objects shared as given), left out of the cyclic
 * collector's lists. */
static PyObject *rle_dicts(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data, ends;
    PyObject *sizes, *out = NULL;
    if (!PyArg_ParseTuple(args, "y*y*O!", &data, &ends, &PyList_Type, &sizes)) return NULL;
    Py_ssize_t n = ends.len / (Py_ssize_t)sizeof(int64_t);
    PyObject *k_size = PyUnicode_InternFromString("size");
    PyObject *k_counts = PyUnicode_InternFromString("counts");
    if (k_size == NULL || k_counts == NULL) goto done;
    if (PyList_GET_SIZE(sizes) != n) {
        PyErr_SetString(PyExc_ValueError, "rle_dicts: ends and sizes do not match");
        goto done;
    }
    out = PyList_New(n);
    if (out == NULL) goto done;
    const int64_t *end_at = (const int64_t *)ends.buf;
    int64_t start = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t stop = end_at[i];
        if (stop < start || stop > (int64_t)data.len) {
            PyErr_SetString(PyExc_ValueError, "rle_dicts: ends out of range");
            Py_CLEAR(out);
            goto done;
        }
        PyObject *d = PyDict_New();
        PyObject *c = PyBytes_FromStringAndSize((const char *)data.buf + start,
                                                (Py_ssize_t)(stop - start));
        if (d == NULL || c == NULL || PyDict_SetItem(d, k_size, PyList_GET_ITEM(sizes, i)) < 0 ||
            PyDict_SetItem(d, k_counts, c) < 0) {
            Py_XDECREF(d);
            Py_XDECREF(c);
            Py_CLEAR(out);
            goto done;
        }
        Py_DECREF(c);
        /* no collection need look at it: it holds bytes and a size list, in no cycle (CPython
         * tracks it again by itself if a container is ever put in it) */
        PyObject_GC_UnTrack(d);
        PyList_SET_ITEM(out, i, d);
        start = stop;
    }
done:
    Py_XDECREF(k_size);
    Py_XDECREF(k_counts);
    PyBuffer_Release(&data);
    PyBuffer_Release(&ends);
    return out;
}

/* ------------------------------------------------------------------ mask IoU */

/* A decoded mask: its foreground as sorted pixel intervals [lo, hi) (column-major), its
 * pixel count and size. */
typedef struct {
    uint32_t *iv; /* 2 * n_iv */
    int64_t n_iv, area, h, w;
} Mask;

static void mask_free(Mask *m) {
    free(m->iv);
    m->iv = NULL;
    m->n_iv = 0;
}

/* Decode one COCO RLE dict (compressed counts as bytes or ASCII text, size [h, w]) as
 * pycocotools does. NOPE if it is not of that shape or corrupt (the caller then uses
 * pycocotools), NOMEM, else OK. */
static int mask_decode(PyObject *rle, Mask *m) {
    if (!PyDict_Check(rle)) return NOPE;
    PyObject *counts = PyDict_GetItemString(rle, "counts"); /* borrowed */
    PyObject *size = PyDict_GetItemString(rle, "size");
    if (counts == NULL || size == NULL || !PyList_Check(size) || PyList_GET_SIZE(size) != 2)
        return NOPE;
    const char *text;
    Py_ssize_t len;
    if (PyBytes_Check(counts)) {
        text = PyBytes_AS_STRING(counts);
        len = PyBytes_GET_SIZE(counts);
    } else if (PyUnicode_Check(counts) && PyUnicode_IS_ASCII(counts)) {
        text = (const char *)PyUnicode_DATA(counts);
        len = PyUnicode_GET_LENGTH(counts);
    } else {
        return NOPE;
    }
    PyObject *ho = PyList_GET_ITEM(size, 0), *wo = PyList_GET_ITEM(size, 1);
    if (!PyLong_Check(ho) || !PyLong_Check(wo)) return NOPE;
    long long h = PyLong_AsLongLong(ho), w = PyLong_AsLongLong(wo);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return NOPE;
    }
    if (h < 0 || w < 0 || h > INT32_MAX || w > INT32_MAX || h * w > UINT32_MAX) return NOPE;
    int64_t size_px = h * w;
    size_t cap = (size_t)len / 2 + 2;
    m->iv = (uint32_t *)malloc(cap * 2 * sizeof(uint32_t));
    if (m->iv == NULL) return NOMEM;
    m->n_iv = 0;
    m->area = 0;
    m->h = h;
    m->w = w;
    const unsigned char *s = (const unsigned char *)text, *e = s + len;
    int64_t prev2 = 0, prev1 = 0, pos = 0, runs = 0;
    while (s < e) {
        int64_t x;
        if (next_run(&s, e, &x) < 0) goto corrupt;
        if (runs > 2) x += prev2;
        if (x < 0 || pos + x > size_px) goto corrupt;
        if ((runs & 1) && x > 0) { /* a run of 1s: one interval (never more than chars/2+1) */
            if ((size_t)m->n_iv >= cap) goto corrupt;
            m->iv[2 * m->n_iv] = (uint32_t)pos;
            m->iv[2 * m->n_iv + 1] = (uint32_t)(pos + x);
            m->n_iv++;
            m->area += x;
        }
        pos += x;
        prev2 = prev1;
        prev1 = x;
        runs++;
    }
    if (pos != size_px) goto corrupt;
    return OK;
corrupt:
    mask_free(m);
    return NOPE;
}

/* Pixels in both masks: the overlap of two sorted interval lists. */
static int64_t intersection(const Mask *a, const Mask *b) {
    int64_t i = 0, j = 0, inter = 0;
    while (i < a->n_iv && j < b->n_iv) {
        uint32_t alo = a->iv[2 * i], ahi = a->iv[2 * i + 1];
        uint32_t blo = b->iv[2 * j], bhi = b->iv[2 * j + 1];
        uint32_t lo = alo > blo ? alo : blo, hi = ahi < bhi ? ahi : bhi;
        if (hi > lo) inter += hi - lo;
        if (ahi < bhi) i++;
        else j++;
    }
    return inter;
}

/* rle_pair_iou(dt_rles, gt_rles, di, gi, group, crowd): the mask IoU of every pair
 * (dt_rles[di[p]], gt_rles[gi[p]]) as pycocotools.mask.iou computes it (a crowd ground
 * truth divides by the detection's pixel count), float64 as bytes. Pairs come grouped
 * (group, int64, non-decreasing, e.g. the image) and, within a group, by detection: each
 * detection is decoded once, each ground truth once per group. None when some mask is not
 * a compressed RLE dict this reads, or two masks of a pair differ in size (the caller then
 * uses pycocotools). */
static PyObject *rle_pair_iou(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *dts, *gts, *result = NULL;
    Py_buffer di, gi, group, crowd;
    if (!PyArg_ParseTuple(args, "O!O!y*y*y*y*", &PyList_Type, &dts, &PyList_Type, &gts, &di,
                          &gi, &group, &crowd))
        return NULL;
    Py_ssize_t np_ = di.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t ng = PyList_GET_SIZE(gts), nd = PyList_GET_SIZE(dts);
    Mask *gcache = NULL, dmask = {NULL, 0, 0, 0, 0};
    int64_t *touched = NULL, n_touched = 0, cur_d = -1, cur_group = 0;
    int r = OK;
    if (gi.len != di.len || group.len != di.len || crowd.len != ng) {
        PyErr_SetString(PyExc_ValueError, "rle_pair_iou: the pair arrays do not match");
        goto done;
    }
    result = PyBytes_FromStringAndSize(NULL, np_ * (Py_ssize_t)sizeof(double));
    gcache = (Mask *)calloc((size_t)ng + 1, sizeof(Mask));
    touched = (int64_t *)malloc(((size_t)np_ + 1) * sizeof(int64_t));
    if (result == NULL || gcache == NULL || touched == NULL) {
        r = NOMEM;
        goto done;
    }
    const int64_t *D = (const int64_t *)di.buf, *G = (const int64_t *)gi.buf;
    const int64_t *GR = (const int64_t *)group.buf;
    const unsigned char *C = (const unsigned char *)crowd.buf;
    double *out = (double *)PyBytes_AS_STRING(result);
    for (Py_ssize_t p = 0; p < np_; p++) {
        int64_t d = D[p], g = G[p];
        if (d < 0 || d >= nd || g < 0 || g >= ng) {
            r = NOPE;
            goto done;
        }
        if (p == 0 || GR[p] != cur_group) { /* a new group: its ground truths decoded anew */
            for (int64_t t = 0; t < n_touched; t++) mask_free(&gcache[touched[t]]);
            n_touched = 0;
            cur_group = GR[p];
            cur_d = -1;
        }
        if (d != cur_d) {
            mask_free(&dmask);
            if ((r = mask_decode(PyList_GET_ITEM(dts, d), &dmask)) != OK) goto done;
            cur_d = d;
        }
        Mask *gm = &gcache[g];
        if (gm->iv == NULL) {
            if ((r = mask_decode(PyList_GET_ITEM(gts, g), gm)) != OK) goto done;
            touched[n_touched++] = g;
        }
        if (dmask.h != gm->h || dmask.w != gm->w) {
            r = NOPE;
            goto done;
        }
        int64_t inter = intersection(&dmask, gm);
        int64_t uni = C[g] ? dmask.area : dmask.area + gm->area - inter;
        out[p] = inter == 0 ? 0.0 : (double)inter / (double)uni;
    }
done:
    mask_free(&dmask);
    if (gcache != NULL) {
        for (int64_t t = 0; t < n_touched; t++) mask_free(&gcache[touched[t]]);
        free(gcache);
    }
    free(touched);
    PyBuffer_Release(&di);
    PyBuffer_Release(&gi);
    PyBuffer_Release(&group);
    PyBuffer_Release(&crowd);
    if (r == NOMEM) {
        Py_CLEAR(result);
        return PyErr_NoMemory();
    }
    if (r == NOPE) {
        Py_CLEAR(result);
        Py_RETURN_NONE;
    }
    return result;
}

/* ------------------------------------------------------------------ polygons */

/* Append runs as COCO's compressed counts text: 5 bits a character (offset 48), bit 0x20 =
 * more characters follow, the last character's bit 0x10 the sign; from the fourth run on,
 * the difference from the run two places earlier. */
static int encode_runs(const uint32_t *runs, size_t m, Buf *out) {
    for (size_t i = 0; i < m; i++) {
        int64_t x = (int64_t)runs[i] - (i > 2 ? (int64_t)runs[i - 2] : 0);
        int more = 1;
        while (more) {
            unsigned char c = (unsigned char)(x & 0x1f);
            x = x < 0 ? ~(~x >> 5) : x >> 5; /* an arithmetic shift, for either sign */
            more = (c & 0x10) ? x != -1 : x != 0;
            if (more) c |= 0x20;
            c = (unsigned char)(c + 48);
            if (buf_put(out, &c, 1) < 0) return NOMEM;
        }
    }
    return OK;
}

#define MAX_EDGE_POINTS ((size_t)1 << 26)

/* One polygon (k vertices xy) rasterised at h x w by pycocotools' rule: vertices scaled by 5
 * and rounded, every edge walked point by point along its longer axis, the points where
 * the boundary crosses a pixel column's centre kept (rounded down to the pixel rows), and
 * the sorted crossings turned into runs. Its counts are appended to out, its pixel count
 * stored in *area. NOPE (the caller uses pycocotools) for coordinates too large to round
 * into an int or an edge walk too long to hold. */
static int polygon(const double *xy, size_t k, int64_t h, int64_t w, size_t *first, Buf *out,
                   int64_t *area) {
    const double scale = 5;
    int r = NOPE;
    int *x = NULL, *y = NULL, *u = NULL, *v = NULL;
    uint32_t *a = NULL, *b = NULL;
    size_t m = 0, n = 0;
    x = (int *)malloc((k + 1) * sizeof(int));
    y = (int *)malloc((k + 1) * sizeof(int));
    if (x == NULL || y == NULL) goto nomem;
    for (size_t j = 0; j < k; j++) {
        double px = scale * xy[2 * j] + .5, py = scale * xy[2 * j + 1] + .5;
        if (!(fabs(px) < 1e9 && fabs(py) < 1e9)) goto done; /* (int) of these is exact */
        x[j] = (int)px;
        y[j] = (int)py;
    }
    x[k] = x[0];
    y[k] = y[0];
    for (size_t j = 0; j < k; j++) {
        int dx = abs(x[j] - x[j + 1]), dy = abs(y[j] - y[j + 1]);
        m += (size_t)(dx > dy ? dx : dy) + 1;
        if (m > MAX_EDGE_POINTS) goto done;
    }
    u = (int *)malloc((m + 1) * sizeof(int));
    v = (int *)malloc((m + 1) * sizeof(int));
    if (u == NULL || v == NULL) goto nomem;
    m = 0;
    for (size_t j = 0; j < k; j++) {
        int xs = x[j], xe = x[j + 1], ys = y[j], ye = y[j + 1], t;
        int dx = abs(xe - xs), dy = abs(ys - ye);
        int flip = (dx >= dy && xs > xe) || (dx < dy && ys > ye);
        if (flip) {
            t = xs; xs = xe; xe = t;
            t = ys; ys = ye; ye = t;
        }
        if (dx >= dy) {
            /* a repeated vertex (dx = dy = 0): one point, whose row is never used below
             * (its neighbours share its column) */
            double s = dx ? (double)(ye - ys) / dx : 0.0;
            for (int d = 0; d <= dx; d++) {
                t = flip ? dx - d : d;
                u[m] = t + xs;
                v[m] = (int)(ys + s * t + .5);
                m++;
            }
        } else {
            double s = (double)(xe - xs) / dy;
            for (int d = 0; d <= dy; d++) {
                t = flip ? dy - d : d;
                v[m] = t + ys;
                u[m] = (int)(xs + s * t + .5);
                m++;
            }
        }
    }
    /* the crossings (column, row), sorted by column (a counting pass: columns < w) and by
     * row within a column (few each: an insertion sort), as pixel positions col * h + row,
     * then the raster's end */
    a = (uint32_t *)malloc((2 * m + 1) * sizeof(uint32_t));
    if (a == NULL) goto nomem;
    uint32_t *col = a + m; /* each crossing's column, before the sort */
    for (size_t j = 1; j < m; j++) {
        if (u[j] == u[j - 1]) continue;
        double xd = (double)(u[j] < u[j - 1] ? u[j] : u[j] - 1);
        xd = (xd + .5) / scale - .5;
        if (floor(xd) != xd || xd < 0 || xd > (double)(w - 1)) continue;
        double yd = (double)(v[j] < v[j - 1] ? v[j] : v[j - 1]);
        yd = (yd + .5) / scale - .5;
        if (yd < 0) yd = 0;
        else if (yd > (double)h) yd = (double)h;
        yd = ceil(yd);
        col[n] = (uint32_t)xd;
        a[n++] = (uint32_t)yd; /* the row, for now */
    }
    memset(first, 0, ((size_t)w + 1) * sizeof(size_t));
    for (size_t j = 0; j < n; j++) first[col[j] + 1]++;
    for (int64_t c = 0; c < w; c++) first[c + 1] += first[c];
    for (size_t j = 0; j < n; j++) { /* u (free now) holds the rows in column order */
        size_t at = first[col[j]]++;
        u[at] = (int)a[j];
        v[at] = (int)col[j];
    }
    for (size_t j = 0; j < n; j++) {
        uint32_t key = (uint32_t)v[j] * (uint32_t)h + (uint32_t)u[j];
        size_t i = j;
        while (i > 0 && a[i - 1] > key) { /* only within a column: earlier columns are less */
            a[i] = a[i - 1];
            i--;
        }
        a[i] = key;
    }
    a[n++] = (uint32_t)(h * w);
    uint32_t prev = 0;
    for (size_t j = 0; j < n; j++) {
        uint32_t t = a[j];
        a[j] -= prev;
        prev = t;
    }
    /* the runs: an empty run joins its two neighbours into one */
    b = (uint32_t *)malloc(n * sizeof(uint32_t));
    if (b == NULL) goto nomem;
    size_t nb = 0, j = 0;
    b[nb++] = a[j++];
    while (j < n) {
        if (a[j] > 0) {
            b[nb++] = a[j++];
        } else {
            j++;
            if (j < n) b[nb - 1] += a[j++];
        }
    }
    *area = 0;
    for (size_t i = 1; i < nb; i += 2) *area += b[i];
    r = encode_runs(b, nb, out);
    goto done;
nomem:
    r = NOMEM;
done:
    free(x);
    free(y);
    free(u);
    free(v);
    free(a);
    free(b);
    return r;
}

/* rasterise_polygons(xy, ends, h, w): polygons (all their vertices' x, y as float64, polygon
 * i's vertices ending at ends[i], int64) rasterised at h x w as pycocotools'
 * frPyObjects does: (counts joined, ends int64, areas float64), or None when one cannot be
 * done here (the caller uses pycocotools). */
static PyObject *rasterise_polygons(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer xy, ends;
    long long h, w;
    if (!PyArg_ParseTuple(args, "y*y*LL", &xy, &ends, &h, &w)) return NULL;
    PyObject *result = NULL;
    Buf counts = {NULL, 0, 0}, cends = {NULL, 0, 0}, areas = {NULL, 0, 0};
    size_t *first = NULL; /* per column: where its crossings go (scratch for polygon) */
    int r = OK;
    Py_ssize_t n = ends.len / (Py_ssize_t)sizeof(int64_t);
    size_t points = (size_t)xy.len / (2 * sizeof(double));
    const int64_t *end_at = (const int64_t *)ends.buf;
    if (h < 1 || w < 1 || h * w > UINT32_MAX || h > INT32_MAX || w > INT32_MAX) {
        r = NOPE;
        goto finish;
    }
    first = (size_t *)malloc(((size_t)w + 1) * sizeof(size_t));
    if (first == NULL) {
        r = NOMEM;
        goto finish;
    }
    int64_t start = 0;
    for (Py_ssize_t i = 0; i < n && r == OK; i++) {
        int64_t stop = end_at[i], area = 0;
        if (stop < start + 1 || (size_t)stop > points) {
            PyErr_SetString(PyExc_ValueError, "rasterise_polygons: ends out of range");
            goto done;
        }
        r = polygon((const double *)xy.buf + 2 * start, (size_t)(stop - start), h, w, first,
                    &counts, &area);
        int64_t at = (int64_t)counts.len;
        double a = (double)area;
        if (r == OK && (buf_put(&cends, &at, sizeof at) < 0 || buf_put(&areas, &a, sizeof a) < 0))
            r = NOMEM;
        start = stop;
    }
finish:
    if (r == OK) {
        PyObject *c = buf_bytes(&counts), *e = buf_bytes(&cends), *a = buf_bytes(&areas);
        if (c != NULL && e != NULL && a != NULL) result = PyTuple_Pack(3, c, e, a);
        Py_XDECREF(c);
        Py_XDECREF(e);
        Py_XDECREF(a);
    } else if (r == NOMEM) {
        PyErr_NoMemory();
    } else {
        result = Py_NewRef(Py_None);
    }
done:
    free(first);
    free(counts.p);
    free(cends.p);
    free(areas.p);
    PyBuffer_Release(&xy);
    PyBuffer_Release(&ends);
    return result;
}

static PyMethodDef METHODS[] = {
    {"scan_results", scan_results, METH_O,
     "scan_results(data: bytes) -> tuple | None: a COCO results list as columns."},
    {"counts_area", counts_area, METH_VARARGS,
     "counts_area(data, ends, hw) -> bytes | None: pixel counts of joined RLE counts."},
    {"rle_dicts", rle_dicts, METH_VARARGS,
     "rle_dicts(data, ends, sizes) -> list[dict]: each mask's RLE dict (counts as bytes)."},
    {"rasterise_polygons", rasterise_polygons, METH_VARARGS,
     "rasterise_polygons(xy, ends, h, w) -> (counts, ends, areas) | None: polygon masks."},
    {"rle_pair_iou", rle_pair_iou, METH_VARARGS,
     "rle_pair_iou(dt_rles, gt_rles, di, gi, group, crowd) -> bytes | None: mask IoUs."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "_coco_native",
    "Compiled COCO kernels of assay.io (the pure-Python path gives the same results).", -1,
    METHODS, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__coco_native(void) {
    init_stop();
    return PyModule_Create(&MODULE);
}

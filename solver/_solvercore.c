/*
 * solver._solvercore: the hot loop of solver/dfs.py's ``_search`` in C (with
 * solver/deadends.py's ``_hopeless``).
 *
 * ``Search(st, prune_from, proven, jitter, sleep=True)`` is node for node the generator
 * ``_search(st, prune_from, seed, stop, proven, sleep)``: the same moves in the same
 * order, the same sleep sets and frozen blocks, the same dead-end tests (``_hopeless``),
 * the same Tarjan bookkeeping, the same additions to the shared ``proven`` set.
 * ``advance(stop)`` is ``next``/``send``; ``result``, ``nodes`` and ``journal()`` give
 * what the generator's return value and ``st.journal`` give.
 *
 * The C object copies the position out of ``st`` (a ``solver.state._State``) and never
 * touches it again. ``proven`` is a ``ProvenSet`` (this module's set of 64-bit keys in C,
 * what ``solve`` passes) or a Python ``set`` of ints, reached through the Python API; the
 * search asks and adds the same keys in the same order either way. Comments name the
 * Python code each part mirrors; docs/solver.md explains the algorithm.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>

#define FOUND 7
#define DOWN 8
#define BOTTOM 52
#define K_UP 0
#define K_FLIP 1
#define K_EMPTY 2
#define JOIN (1 << 9)
#define DONE ((int64_t)1 << 62)
/* Room reserved in the moves array before each expansion: more than any one expansion
 * can produce (fewer than 1,000 moves). */
#define EXPAND_ROOM 2048

/* The Zobrist tables: the module's only mutable globals, set once by set_tables. */
static uint64_t ZUP[52 * 53];
static uint64_t ZDOWN[52 * 53];
static uint64_t ZFOUND[52];
static int tables_ready = 0;

/* -- hash tables ----------------------------------------------------------------------- */

/* ``full``: key -> index (or DONE); an empty slot has val < 0. */
typedef struct {
    uint64_t key;
    int64_t val;
} FullSlot;

typedef struct {
    FullSlot *slots;
    size_t mask;
    size_t used;
} FullTable;

/* ``part``: the pairs (key, code + 1) of ``key | (code + 1) << 64``; code1 == 0: empty. */
typedef struct {
    uint64_t key;
    uint64_t code1;
} PartSlot;

typedef struct {
    PartSlot *slots;
    size_t mask;
    size_t used;
} PartTable;

/* The full 64-bit finalizer of MurmurHash3, the slot of a key in every table here: keys
 * made by hand (tests, small counters) spread as well as the random Zobrist keys. */
static inline size_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return (size_t)x;
}

static int full_init(FullTable *t, size_t cap) {
    t->slots = (FullSlot *)malloc(cap * sizeof(FullSlot));
    if (!t->slots) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        t->slots[i].val = -1;
    t->mask = cap - 1;
    t->used = 0;
    return 0;
}

static inline int64_t full_get(const FullTable *t, uint64_t key) {
    size_t h = mix64(key) & t->mask;
    for (;;) {
        const FullSlot *e = &t->slots[h];
        if (e->val < 0)
            return -1;
        if (e->key == key)
            return e->val;
        h = (h + 1) & t->mask;
    }
}

static int full_grow(FullTable *t) {
    size_t oldcap = t->mask + 1;
    FullSlot *old = t->slots;
    size_t cap = oldcap * 2;
    FullSlot *slots = (FullSlot *)malloc(cap * sizeof(FullSlot));
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        slots[i].val = -1;
    size_t mask = cap - 1;
    for (size_t i = 0; i < oldcap; i++) {
        if (old[i].val >= 0) {
            size_t h = mix64(old[i].key) & mask;
            while (slots[h].val >= 0)
                h = (h + 1) & mask;
            slots[h] = old[i];
        }
    }
    free(old);
    t->slots = slots;
    t->mask = mask;
    return 0;
}

/* full[key] = val (insert or replace). */
static int full_put(FullTable *t, uint64_t key, int64_t val) {
    if ((t->used + 1) * 2 > t->mask + 1 && full_grow(t) < 0)
        return -1;
    size_t h = mix64(key) & t->mask;
    for (;;) {
        FullSlot *e = &t->slots[h];
        if (e->val < 0) {
            e->key = key;
            e->val = val;
            t->used++;
            return 0;
        }
        if (e->key == key) {
            e->val = val;
            return 0;
        }
        h = (h + 1) & t->mask;
    }
}

static int part_init(PartTable *t, size_t cap) {
    t->slots = (PartSlot *)calloc(cap, sizeof(PartSlot));
    if (!t->slots) {
        PyErr_NoMemory();
        return -1;
    }
    t->mask = cap - 1;
    t->used = 0;
    return 0;
}

static inline size_t part_hash(uint64_t key, uint64_t code1) {
    return mix64(key ^ (code1 * 0x9E3779B97F4A7C15ULL));
}

static inline int part_has(const PartTable *t, uint64_t key, uint64_t code1) {
    size_t h = part_hash(key, code1) & t->mask;
    for (;;) {
        const PartSlot *e = &t->slots[h];
        if (!e->code1)
            return 0;
        if (e->key == key && e->code1 == code1)
            return 1;
        h = (h + 1) & t->mask;
    }
}

static int part_add(PartTable *t, uint64_t key, uint64_t code1) {
    if ((t->used + 1) * 2 > t->mask + 1) {
        size_t oldcap = t->mask + 1;
        PartSlot *old = t->slots;
        size_t cap = oldcap * 2;
        PartSlot *slots = (PartSlot *)calloc(cap, sizeof(PartSlot));
        if (!slots) {
            PyErr_NoMemory();
            return -1;
        }
        size_t mask = cap - 1;
        for (size_t i = 0; i < oldcap; i++) {
            if (old[i].code1) {
                size_t h = part_hash(old[i].key, old[i].code1) & mask;
                while (slots[h].code1)
                    h = (h + 1) & mask;
                slots[h] = old[i];
            }
        }
        free(old);
        t->slots = slots;
        t->mask = mask;
    }
    size_t h = part_hash(key, code1) & t->mask;
    for (;;) {
        PartSlot *e = &t->slots[h];
        if (!e->code1) {
            e->key = key;
            e->code1 = code1;
            t->used++;
            return 0;
        }
        if (e->key == key && e->code1 == code1)
            return 0;
        h = (h + 1) & t->mask;
    }
}

/* Grow a malloc'ed array so that it holds at least ``need`` items. */
static int grow(void **arr, size_t *cap, size_t need, size_t item) {
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *p = realloc(*arr, c * item);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    *arr = p;
    *cap = c;
    return 0;
}

/* -- ProvenSet: the shared set of positions proven lost -------------------------------- */

/* A set of 64-bit keys (any value, 0 included) in one open-addressing table with linear
 * probing: 8 bytes a slot, at most 3/4 full (3/8 or more once it has grown). A slot
 * holding 0 is empty; the key 0 itself is kept aside in ``has_zero``. Only ever added
 * to, so no deletion marks are needed. It holds no Python objects (not GC-tracked). */
typedef struct {
    PyObject_HEAD
    uint64_t *slots; /* NULL until the first nonzero key */
    size_t mask;     /* capacity - 1 (a power of two), 0 while slots is NULL */
    size_t used;     /* nonzero keys stored */
    int has_zero;
} ProvenSetObject;

#define PS_MIN_CAP 1024

static inline int ps_has(const ProvenSetObject *P, uint64_t key) {
    if (!key)
        return P->has_zero;
    const uint64_t *slots = P->slots;
    if (!slots)
        return 0;
    size_t mask = P->mask;
    size_t h = mix64(key) & mask;
    for (;;) {
        uint64_t e = slots[h];
        if (e == key)
            return 1;
        if (!e)
            return 0;
        h = (h + 1) & mask;
    }
}

/* Rebuild the table with ``cap`` slots (a power of two, room for every key). */
static int ps_resize(ProvenSetObject *P, size_t cap) {
    uint64_t *slots = (uint64_t *)calloc(cap, sizeof(uint64_t));
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    size_t mask = cap - 1;
    uint64_t *old = P->slots;
    if (old) {
        size_t oldcap = P->mask + 1;
        for (size_t i = 0; i < oldcap; i++) {
            uint64_t k = old[i];
            if (k) {
                size_t h = mix64(k) & mask;
                while (slots[h])
                    h = (h + 1) & mask;
                slots[h] = k;
            }
        }
        free(old);
    }
    P->slots = slots;
    P->mask = mask;
    return 0;
}

/* Add ``key``: 0 done (added or already there), -1 out of memory (a Python error set). */
static int ps_add(ProvenSetObject *P, uint64_t key) {
    if (!key) {
        P->has_zero = 1;
        return 0;
    }
    if (!P->slots) {
        if (ps_resize(P, PS_MIN_CAP) < 0)
            return -1;
    } else if ((P->used + 1) * 4 > (P->mask + 1) * 3) {
        /* Full enough to grow, unless the key is already there (then nothing changes). */
        if (ps_has(P, key))
            return 0;
        if (P->mask + 1 > SIZE_MAX / 2 / sizeof(uint64_t)) {
            PyErr_NoMemory();
            return -1;
        }
        if (ps_resize(P, (P->mask + 1) * 2) < 0)
            return -1;
    }
    uint64_t *slots = P->slots;
    size_t mask = P->mask;
    size_t h = mix64(key) & mask;
    for (;;) {
        uint64_t e = slots[h];
        if (e == key)
            return 0;
        if (!e) {
            slots[h] = key;
            P->used++;
            return 0;
        }
        h = (h + 1) & mask;
    }
}

/* A Python int as a key: 1 with ``*out`` set, 0 an int outside 0..2**64-1 (no error
 * left set), -1 not an int (TypeError set) or another error. */
static int ps_key(PyObject *obj, uint64_t *out) {
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "ProvenSet keys are ints, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    uint64_t v = PyLong_AsUnsignedLongLong(obj);
    if (v == (uint64_t)-1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    *out = v;
    return 1;
}

static PyObject *ProvenSet_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, ":ProvenSet", kwlist))
        return NULL;
    /* tp_alloc zeroes it: empty, no table yet */
    return type->tp_alloc(type, 0);
}

static void ProvenSet_dealloc(ProvenSetObject *P) {
    free(P->slots);
    P->slots = NULL;
    Py_TYPE(P)->tp_free((PyObject *)P);
}

static Py_ssize_t ProvenSet_len(ProvenSetObject *P) {
    return (Py_ssize_t)(P->used + (size_t)P->has_zero);
}

static int ProvenSet_contains(ProvenSetObject *P, PyObject *obj) {
    uint64_t key;
    int r = ps_key(obj, &key);
    if (r <= 0)
        return r; /* an int out of range: not in the set (False); not an int: TypeError */
    return ps_has(P, key);
}

static PyObject *ProvenSet_add(ProvenSetObject *P, PyObject *obj) {
    uint64_t key;
    int r = ps_key(obj, &key);
    if (r < 0)
        return NULL;
    if (r == 0) {
        PyErr_SetString(PyExc_OverflowError, "ProvenSet keys must be in 0..2**64-1");
        return NULL;
    }
    if (ps_add(P, key) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *ProvenSet_keys(ProvenSetObject *P, PyObject *Py_UNUSED(ignored)) {
    PyObject *list = PyList_New(ProvenSet_len(P));
    if (!list)
        return NULL;
    Py_ssize_t n = 0;
    if (P->has_zero) {
        PyObject *k = PyLong_FromUnsignedLongLong(0);
        if (!k) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, n++, k);
    }
    if (P->slots) {
        size_t cap = P->mask + 1;
        for (size_t i = 0; i < cap; i++) {
            if (P->slots[i]) {
                PyObject *k = PyLong_FromUnsignedLongLong(P->slots[i]);
                if (!k) {
                    Py_DECREF(list);
                    return NULL;
                }
                PyList_SET_ITEM(list, n++, k);
            }
        }
    }
    return list;
}

/* iter(s): over a snapshot of the keys (adding while iterating is harmless). */
static PyObject *ProvenSet_iter(ProvenSetObject *P) {
    PyObject *list = ProvenSet_keys(P, NULL);
    if (!list)
        return NULL;
    PyObject *it = PyObject_GetIter(list);
    Py_DECREF(list);
    return it;
}

static PyObject *ProvenSet_sizeof(ProvenSetObject *P, PyObject *Py_UNUSED(ignored)) {
    size_t size = (size_t)Py_TYPE(P)->tp_basicsize;
    if (P->slots)
        size += (P->mask + 1) * sizeof(uint64_t);
    return PyLong_FromSize_t(size);
}

static PyObject *ProvenSet_repr(ProvenSetObject *P) {
    return PyUnicode_FromFormat("<ProvenSet of %zd keys>", ProvenSet_len(P));
}

static PySequenceMethods ProvenSet_as_sequence = {
    .sq_length = (lenfunc)ProvenSet_len,
    .sq_contains = (objobjproc)ProvenSet_contains,
};

static PyMethodDef ProvenSet_methods[] = {
    {"add", (PyCFunction)ProvenSet_add, METH_O,
     "add(key): add an int in 0..2**64-1 (OverflowError outside, TypeError if not an int)."},
    {"keys", (PyCFunction)ProvenSet_keys, METH_NOARGS, "keys() -> list: every key, as ints."},
    {"__sizeof__", (PyCFunction)ProvenSet_sizeof, METH_NOARGS,
     "The object and its table, in bytes."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ProvenSetType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "solver._solvercore.ProvenSet",
    .tp_doc = "ProvenSet(): a set of 64-bit keys (ints 0..2**64-1) in C, for Search's proven.\n\n"
              "``key in s``, ``s.add(key)``, ``len(s)``, ``iter(s)``/``s.keys()``. ``in`` is\n"
              "False for an int outside 0..2**64-1 and ``add`` raises OverflowError; anything\n"
              "but an int raises TypeError for both.",
    .tp_basicsize = sizeof(ProvenSetObject),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = ProvenSet_new,
    .tp_dealloc = (destructor)ProvenSet_dealloc,
    .tp_repr = (reprfunc)ProvenSet_repr,
    .tp_as_sequence = &ProvenSet_as_sequence,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_iter = (getiterfunc)ProvenSet_iter,
    .tp_methods = ProvenSet_methods,
};

/* -- the object ------------------------------------------------------------------------ */

/* An undo record (card, src, dest, n, turned). */
typedef struct {
    int8_t card, src, dest, n, turned;
} JEntry;

/* One position on the depth-first stack: Python's stack/pos/played/keys/piles/alive and
 * index/low at the same depth. */
typedef struct {
    size_t moves_off;
    int32_t moves_len;
    int32_t pos;
    int32_t played;
    int32_t pile_len;
    int32_t pile0, pile1;
    int32_t alive;
    uint64_t key;
    int64_t index, low;
    /* sleep sets and frozen blocks (complete searches): at ``aux[aux_off]`` the position's
     * sleep set (sl_len entries ``src << 9 | card << 3 | dest``), its frozen blocks (fz_len,
     * FZ_PACK), then room for the plain moves it has tried (tr_len so far, moves_len at
     * most). Python's asleep, frozen and tried at the same depth. */
    size_t aux_off;
    int32_t sl_len, fz_len, tr_len;
} Frame;

/* A frozen block: its card, the columns it left and joined, the card its move turned up
 * (or -1) and the columns touched since, as bits. */
#define FZ_PACK(c, x, y, f, t) ((c) << 20 | (x) << 17 | (y) << 14 | ((f) + 1) << 7 | (t))
#define FZ_CARD(e) ((e) >> 20)
#define FZ_SRC(e) (((e) >> 17) & 7)
#define FZ_DST(e) (((e) >> 14) & 7)
#define FZ_TURNED(e) ((((e) >> 7) & 63) - 1)
#define FZ_TOUCHED(e) ((e) & 127)

typedef struct {
    PyObject_HEAD
    /* the position */
    uint8_t cols[7][52];
    int len[7];
    int down[7];
    int loc[52];
    int idx[52]; /* a tableau card's index in its column (``col.index(card)``) */
    int found[4];
    uint64_t key;
    int up;
    /* the rules */
    uint8_t table[52 * 52];
    uint8_t builders[52][52];
    int nbuilders[52];
    uint8_t seats[52][52];
    int nseats[52];
    uint8_t roams[52];
    uint64_t seatmask[52]; /* the seats of a card as a bit set */
    int limit, open_spaces, take_back;
    int n0[52], n1[52], n2[52], n3[52];
    int32_t jitter[512];
    int has_jitter;
    int prune_from, complete;
    PyObject *proven;        /* a set, or a ProvenSet */
    ProvenSetObject *cset;   /* proven when it is a ProvenSet (borrowed), else NULL */
    /* the journal */
    JEntry *journal;
    size_t jlen, jcap;
    /* the journal of the most advanced position reached, and its score (-1: none yet) */
    JEntry *best;
    size_t blen, bcap;
    int best_score;
    /* the search */
    int started, finished, broken, won;
    int64_t nodes, count, tries, hits, stop;
    FullTable full;
    PartTable part;
    uint64_t *comp;
    size_t clen, ccap;
    Frame *frames;
    size_t nframes, fcap;
    int32_t *moves;
    size_t mlen, mcap;
    int sleeping; /* sleep sets and frozen blocks: ``sleep and complete`` */
    int sleep;    /* asked for (the constructor's ``sleep``) */
    int32_t *aux;
    size_t auxcap;
    int bad; /* an impossible state met in move generation (Python would raise) */
    /* the loop's variables kept across a yield */
    int resume;
    int y_c, y_d, y_n, y_rec, y_k, y_up;
    int y_pile_len, y_pile0, y_pile1;
    uint64_t y_key, y_code1;
} SearchObject;

#define SAFE(S, t)                                                                        \
    ((S)->found[0] >= (S)->n0[t] && (S)->found[1] >= (S)->n1[t] &&                        \
     (S)->found[2] >= (S)->n2[t] && (S)->found[3] >= (S)->n3[t])

/* May ``t`` (playable: the card below it in its suit is up) go up at once? Safe by its
 * needs, or, without take-back, when every card that could be placed on it is up or lies
 * face down where it goes up the moment it is turned (playable and safe by its needs):
 * then nothing is ever placed on ``t``. ``safe`` in dfs.py; docs/solver.md. */
static inline int safe_up(const SearchObject *S, int t) {
    if (SAFE(S, t))
        return 1;
    if (S->take_back)
        return 0;
    const uint8_t *bl = S->builders[t];
    int nb = S->nbuilders[t];
    for (int q = 0; q < nb; q++) {
        int b = bl[q];
        int lb = S->loc[b];
        if (lb == FOUND)
            continue;
        if (lb == DOWN && S->found[b / 13] == b % 13 && SAFE(S, b))
            continue;
        return 0;
    }
    return 1;
}

static int journal_push(SearchObject *S, int card, int src, int dest, int n, int turned) {
    if (S->jlen == S->jcap && grow((void **)&S->journal, &S->jcap, S->jlen + 1, sizeof(JEntry)) < 0)
        return -1;
    JEntry *e = &S->journal[S->jlen++];
    e->card = (int8_t)card;
    e->src = (int8_t)src;
    e->dest = (int8_t)dest;
    e->n = (int8_t)n;
    e->turned = (int8_t)turned;
    return 0;
}

/* -- proven: a ProvenSet in C, or a Python set through the API ------------------------ */

static int proven_has(SearchObject *S, uint64_t key) {
    if (S->cset)
        return ps_has(S->cset, key);
    PyObject *k = PyLong_FromUnsignedLongLong(key);
    if (!k)
        return -1;
    int r = PySet_Contains(S->proven, k);
    Py_DECREF(k);
    return r;
}

static int proven_add(SearchObject *S, uint64_t key) {
    if (S->cset)
        return ps_add(S->cset, key);
    PyObject *k = PyLong_FromUnsignedLongLong(key);
    if (!k)
        return -1;
    int r = PySet_Add(S->proven, k);
    Py_DECREF(k);
    return r;
}

/* -- _hopeless -------------------------------------------------------------------------- */

#define BIT(x) ((uint64_t)1 << (x))

/* leave(b) of _hopeless: b can leave, so the card below it can be uncovered; a face-up b
   with a card below it in a column where a card waits for a seat above it goes on the
   second work list. A macro on hopeless's locals, which then stay in registers. */
#define LEAVE(b_)                                                                          \
    do {                                                                                   \
        int b0 = (b_);                                                                     \
        leaves |= BIT(b0);                                                                 \
        int y0 = below[b0];                                                                \
        if (y0 < 0)                                                                        \
            bottoms_left = 1;                                                              \
        else if (!(uncovered & BIT(y0))) {                                                 \
            uncovered |= BIT(y0);                                                          \
            work[wn++] = y0;                                                               \
        }                                                                                  \
        int c0 = loc[b0];                                                                  \
        if (c0 < 7) {                                                                      \
            gone[c0] |= BIT(height[b0]);                                                   \
            if (((waiting >> c0) & 1) && y0 >= 0 && loc[y0] == c0)                         \
                freed[fn++] = b0;                                                          \
        }                                                                                  \
    } while (0)

static int hopeless(const SearchObject *S) {
    int8_t below[52];
    int8_t height[52]; /* a tableau card's place in its column, from the bottom */
    uint64_t gone[7] = {0}; /* per column: the places of the cards found able to leave */
    uint64_t uncovered = 0, goes_up = 0, leaves = 0;
    int work[64];
    int wn = 0;
    int freed[64]; /* face-up cards found able to leave, still to spread */
    int fn = 0;
    int waiting = 0; /* the columns (as bits) with a card held back by a seat above it */
    const int *loc = S->loc;
    memset(below, -1, sizeof below);
    int empty_column = 0;
    for (int c = 0; c < 7; c++) {
        int n = S->len[c];
        if (!n) {
            empty_column = 1;
            continue;
        }
        const uint8_t *col = S->cols[c];
        int under = -1;
        for (int i = 0; i < n; i++) {
            int x = col[i];
            below[x] = (int8_t)under;
            height[x] = (int8_t)i;
            under = x;
        }
        uncovered |= BIT(under);
        work[wn++] = under;
    }
    int up = 0;
    int back = S->take_back;
    for (int suit = 0; suit < 4; suit++) {
        int h = S->found[suit];
        if (h) {
            up += h;
            int base = suit * 13;
            uint64_t run = (BIT(h) - 1) << base;
            goes_up |= run;
            if (back) {
                uncovered |= run;
                for (int r = 0; r < h; r++)
                    work[wn++] = base + r;
            }
        }
    }
    if (up == 52)
        return 0;
    int bottoms_left = 0;
    if (empty_column) {
        for (int b = 0; b < 52; b++) {
            if (S->roams[b] && loc[b] < 7)
                LEAVE(b);
        }
    }
    for (;;) {
        while (wn || fn) {
            while (fn) {
                /* g leaves: a face-up card below it whose uncovered seat lies at or above g
                   in the column can leave too (g takes the seat away) */
                int g = freed[--fn];
                int c = loc[g];
                const uint8_t *col = S->cols[c];
                int hg = height[g];
                for (int i = S->down[c]; i < hg; i++) {
                    int b = col[i];
                    if (leaves & BIT(b))
                        continue;
                    uint64_t m = S->seatmask[b] & uncovered;
                    while (m) {
                        int t = __builtin_ctzll(m);
                        m &= m - 1;
                        if (loc[t] == c && height[t] >= hg) {
                            LEAVE(b);
                            break;
                        }
                    }
                }
            }
            if (!wn)
                break;
            int x = work[--wn];
            if (!(goes_up & BIT(x)) && (x % 13 == 0 || (goes_up & BIT(x - 1)))) {
                int g = x;
                for (;;) {
                    goes_up |= BIT(g);
                    up += 1;
                    if (up == 52)
                        return 0;
                    if (!(leaves & BIT(g)) && loc[g] != FOUND)
                        LEAVE(g);
                    if (g % 13 == 12)
                        break;
                    g += 1;
                    if ((goes_up & BIT(g)) || !(uncovered & BIT(g)))
                        break;
                }
            }
            if (!(leaves & BIT(x)) && loc[x] != FOUND) {
                /* (an uncovered card has no card above it left in its column) */
                if ((empty_column && S->roams[x]) || (S->seatmask[x] & uncovered))
                    LEAVE(x);
            }
            const uint8_t *bl = S->builders[x];
            int nb = S->nbuilders[x];
            for (int q = 0; q < nb; q++) {
                int b = bl[q];
                if (leaves & BIT(b))
                    continue;
                int where = loc[b];
                if (where < 7) {
                    /* x above b in b's column: nothing between them can leave yet */
                    if (where == loc[x] && height[x] > height[b] &&
                        !((gone[where] >> (height[b] + 1)) & (BIT(height[x] - height[b]) - 1))) {
                        waiting |= 1 << where;
                        continue;
                    }
                    LEAVE(b);
                } else if (where == DOWN && (uncovered & BIT(b)))
                    LEAVE(b);
            }
        }
        if (!bottoms_left || empty_column)
            return 1;
        empty_column = 1;
        for (int b = 0; b < 52; b++) {
            if (S->roams[b] && !(leaves & BIT(b))) {
                int where = loc[b];
                if (where < 7 || (where == DOWN && (uncovered & BIT(b))))
                    LEAVE(b);
            }
        }
    }
}

/* -- move generation (the nested functions of _search) --------------------------------- */

/* score(c, s, scol, i) */
static inline int score(const SearchObject *S, int c, int s, int i) {
    int dn = S->down[s];
    if (i == dn)
        return dn ? 100 + dn : 60;
    int p = S->cols[s][i - 1];
    if (S->found[p / 13] == p % 13)
        return 80;
    const uint8_t *bl = S->builders[p];
    int nb = S->nbuilders[p];
    for (int q = 0; q < nb; q++) {
        int b = bl[q];
        int lb = S->loc[b];
        if (lb < 7) {
            if (lb != s || (b != c && S->idx[b] > i))
                return S->table[c * 52 + p] ? 20 : 40;
        } else if (S->take_back && lb == FOUND && S->found[b / 13] == b % 13 + 1) {
            return S->table[c * 52 + p] ? 20 : 40;
        }
    }
    return 1;
}

static void sort_desc(int32_t *a, int n) {
    for (int i = 1; i < n; i++) {
        int32_t v = a[i];
        int j = i - 1;
        while (j >= 0 && a[j] < v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

static int cmp_desc(const void *x, const void *y) {
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a < b) - (a > b);
}

/* The jitter and ``out.sort(reverse=True)`` */
static void finish_moves(const SearchObject *S, int32_t *out, int n) {
    if (S->has_jitter) {
        for (int q = 0; q < n; q++)
            out[q] += S->jitter[out[q] & 511];
    }
    if (n <= 32)
        sort_desc(out, n);
    else
        qsort(out, (size_t)n, sizeof(int32_t), cmp_desc);
}

/* expand(last, flipped) */
/* Every move of a block into the empty column ``e`` (not a whole column, whose move would
 * only relabel it; not the block of ``skip``), appended at ``out[n]``: the loop that
 * ``expand`` and ``deps`` share. Returns the new count. */
static int into_empty(const SearchObject *S, int skip, int e, int32_t *out, int n) {
    int limit = S->limit;
    for (int s = 0; s < 7; s++) {
        int ls = S->len[s];
        int i0 = S->down[s] > 1 ? S->down[s] : 1;
        for (int i = i0; i < ls; i++) {
            int w = S->cols[s][i];
            if (w == skip || !(S->open_spaces || w % 13 == 12))
                continue;
            if (limit && ls - i > limit)
                continue;
            out[n++] = score(S, w, s, i) << 10 | w << 3 | e;
        }
    }
    return n;
}

static int expand(const SearchObject *S, int last, int flipped, int32_t *out) {
    int n = 0;
    int empty = -1;
    int limit = S->limit;
    for (int d = 0; d < 7; d++) {
        int ld = S->len[d];
        if (!ld) {
            if (empty < 0)
                empty = d;
            continue;
        }
        int top = S->cols[d][ld - 1];
        if (S->found[top / 13] == top % 13 && top != last) {
            int dn = S->down[d];
            out[n++] = ((dn && ld - 1 == dn) ? 90 : 70) << 10 | top << 3 | 7;
        }
        const uint8_t *bl = S->builders[top];
        int nb = S->nbuilders[top];
        for (int q = 0; q < nb; q++) {
            int c = bl[q];
            int s = S->loc[c];
            if (s >= 7 || s == d || (c == last && top != flipped))
                continue;
            int i = S->idx[c];
            if (limit && S->len[s] - i > limit)
                continue;
            out[n++] = score(S, c, s, i) << 10 | c << 3 | d;
        }
    }
    if (empty >= 0)
        n = into_empty(S, last, empty, out, n);
    if (S->take_back) {
        for (int suit = 0; suit < 4; suit++) {
            int height = S->found[suit];
            if (!height)
                continue;
            int c = suit * 13 + height - 1;
            if (SAFE(S, c))
                continue;
            int used_empty = 0;
            for (int d = 0; d < 7; d++) {
                int ld = S->len[d];
                if (ld) {
                    if (!S->table[c * 52 + S->cols[d][ld - 1]])
                        continue;
                } else if (used_empty || !(height == 13 || S->open_spaces)) {
                    continue;
                } else {
                    used_empty = 1;
                }
                out[n++] = 5 << 10 | c << 3 | d;
            }
        }
    }
    finish_moves(S, out, n);
    return n;
}

/* depends(rec, w, d) */
static inline int depends(const SearchObject *S, int rec, int w, int d) {
    int kind = rec & 3;
    if (kind == K_EMPTY) {
        if (d == 7 || S->len[d])
            return 0;
        for (int x = 0; x < 7; x++)
            if (x != d && !S->len[x])
                return 0;
        return 1;
    }
    int p = (rec >> 2) & 63;
    int pc = S->loc[p];
    if (d == pc)
        return 1;
    if (w == p && (d == 7 || kind == K_FLIP))
        return 1;
    return kind == K_UP && S->loc[w] == pc && d == S->loc[rec >> 8];
}

/* block_moves(w, out, flag) */
static int block_moves(SearchObject *S, int w, int32_t *out, int n, int flag) {
    int s = S->loc[w];
    if (s >= 7) {
        S->bad = 1;
        return n;
    }
    int i = S->idx[w];
    int ls = S->len[s];
    if (S->limit && ls - i > S->limit)
        return n;
    int v = score(S, w, s, i) << 10 | flag | w << 3;
    int empty = -1;
    for (int d = 0; d < 7; d++) {
        if (d == s)
            continue;
        int ld = S->len[d];
        if (ld) {
            if (S->table[w * 52 + S->cols[d][ld - 1]])
                out[n++] = v | d;
        } else if (empty < 0) {
            empty = d;
        }
    }
    if (empty >= 0 && i && (S->open_spaces || w % 13 == 12))
        out[n++] = v | empty;
    return n;
}

/* back_onto(b, d, out) */
static inline int back_onto(const SearchObject *S, int b, int d, int32_t *out, int n) {
    if (SAFE(S, b))
        return n;
    out[n++] = 5 << 10 | b << 3 | d;
    return n;
}

/* deps(rec, out) */
static int deps(SearchObject *S, int rec, int32_t *out, int n) {
    int c = rec >> 8;
    int kind = rec & 3;
    int limit = S->limit;
    if (kind == K_EMPTY) {
        int e = -1;
        for (int x = 0; x < 7; x++) {
            if (!S->len[x]) {
                if (e >= 0)
                    return n;
                e = x;
            }
        }
        n = into_empty(S, c, e, out, n);
        if (S->take_back) {
            for (int suit = 0; suit < 4; suit++) {
                int h = S->found[suit];
                if (h == 13 || (h && S->open_spaces))
                    n = back_onto(S, suit * 13 + h - 1, e, out, n);
            }
        }
        return n;
    }
    int p = (rec >> 2) & 63;
    int pc = S->loc[p];
    if (S->found[p / 13] == p % 13)
        out[n++] = 70 << 10 | p << 3 | 7;
    const uint8_t *bl = S->builders[p];
    int nb = S->nbuilders[p];
    for (int q = 0; q < nb; q++) {
        int b = bl[q];
        int s = S->loc[b];
        if (s < 7) {
            if (s == pc || b == c)
                continue;
            int i = S->idx[b];
            if (limit && S->len[s] - i > limit)
                continue;
            out[n++] = score(S, b, s, i) << 10 | b << 3 | pc;
        } else if (s == FOUND && S->take_back && S->found[b / 13] == b % 13 + 1) {
            n = back_onto(S, b, pc, out, n);
        }
    }
    if (kind == K_FLIP) {
        n = block_moves(S, p, out, n, 0);
    } else {
        int cc = S->loc[c];
        if (cc >= 7 || pc >= 7) {
            S->bad = 1;
            return n;
        }
        int z = S->cols[cc][S->len[cc] - 1];
        const uint8_t *zl = S->builders[z];
        int nz = S->nbuilders[z];
        int lp = S->len[pc];
        for (int q = 0; q < nz; q++) {
            int b = zl[q];
            if (S->loc[b] == pc) {
                int i = S->idx[b];
                if (limit && lp - i > limit)
                    continue;
                out[n++] = score(S, b, pc, i) << 10 | b << 3 | cc;
            }
        }
    }
    return n;
}

/* joins(rec, out) */
static int joins(SearchObject *S, int rec, int32_t *out, int n) {
    int c = rec >> 8;
    int kind = rec & 3;
    int p = (rec >> 2) & 63;
    int blocks[256];
    int nbk = 0;
    if (kind == K_EMPTY) {
        for (int s = 0; s < 7; s++) {
            int dn = S->down[s];
            if (dn && S->roams[S->cols[s][dn - 1]])
                blocks[nbk++] = S->cols[s][dn];
        }
    } else {
        for (int s = 0; s < 7; s++) {
            int dn = S->down[s];
            if (dn && S->table[S->cols[s][dn - 1] * 52 + p])
                blocks[nbk++] = S->cols[s][dn];
        }
    }
    if (kind == K_FLIP) {
        for (int q = 0; q < S->nseats[p]; q++) {
            int y = S->seats[p][q];
            int ly = S->loc[y];
            if (ly < 7) {
                int j = S->idx[y];
                if (j + 1 < S->len[ly])
                    blocks[nbk++] = S->cols[ly][j + 1];
            } else if (ly == DOWN) {
                for (int s = 0; s < 7; s++) {
                    int dn = S->down[s];
                    if (dn && S->cols[s][dn - 1] == y) {
                        blocks[nbk++] = S->cols[s][dn];
                        break;
                    }
                }
            }
        }
        if (S->roams[p]) {
            int none_empty = 1;
            for (int x = 0; x < 7; x++) {
                if (!S->len[x]) {
                    none_empty = 0;
                    break;
                }
            }
            if (none_empty) {
                for (int s = 0; s < 7; s++)
                    if (!S->down[s])
                        blocks[nbk++] = S->cols[s][0];
            }
        }
    } else if (kind == K_UP) {
        int pc = S->loc[p];
        int cc = S->loc[c];
        if (pc >= 7 || cc >= 7) {
            S->bad = 1;
            return n;
        }
        int lp = S->len[pc];
        for (int j = S->down[pc]; j < lp; j++) {
            if (S->table[S->cols[pc][j] * 52 + p]) {
                for (int q = j + 1; q < lp; q++)
                    blocks[nbk++] = S->cols[pc][q];
                break;
            }
        }
        int lc = S->len[cc];
        for (int i = S->idx[c] + 1; i < lc; i++) {
            int y = S->cols[cc][i - 1];
            const uint8_t *yl = S->builders[y];
            int ny = S->nbuilders[y];
            for (int q = 0; q < ny; q++) {
                if (S->loc[yl[q]] == pc) {
                    blocks[nbk++] = S->cols[cc][i];
                    break;
                }
            }
        }
    }
    uint64_t done = 0;
    for (int q = 0; q < nbk; q++) {
        int w = blocks[q];
        if (w == c || ((done >> w) & 1))
            continue;
        done |= (uint64_t)1 << w;
        int start = n;
        n = block_moves(S, w, out, n, JOIN);
        int k = start;
        for (int r = start; r < n; r++) {
            int32_t m = out[r];
            if (!depends(S, rec, w, m & 7))
                out[k++] = m;
        }
        n = k;
    }
    return n;
}

/* expand_pile(pile) */
static int expand_pile(SearchObject *S, int plen, int r0, int r1, int32_t *out) {
    int n = deps(S, r0, out, 0);
    if (plen == 1) {
        n = joins(S, r0, out, n);
    } else {
        int second = r1 >> 8;
        int k = 0;
        for (int q = 0; q < n; q++) {
            int32_t m = out[q];
            int w = (m >> 3) & 63;
            if (w != second && depends(S, r1, w, m & 7))
                out[k++] = m;
        }
        n = k;
    }
    finish_moves(S, out, n);
    return n;
}

/* -- the search ------------------------------------------------------------------------- */

/* _State.play(card, FOUND) for the safe moves at the root (a top card going up). */
static int play_up(SearchObject *S, int card) {
    int src = S->loc[card];
    uint64_t key = S->key;
    int i = S->idx[card];
    int under = i ? S->cols[src][i - 1] : BOTTOM;
    key ^= ZUP[card * 53 + under] ^ ZFOUND[card];
    S->len[src]--; /* col.pop() */
    S->found[card / 13] += 1;
    S->up += 1;
    S->loc[card] = FOUND;
    int turned = -1;
    if (i && i == S->down[src]) {
        turned = S->cols[src][S->len[src] - 1];
        S->down[src] = i - 1;
        S->loc[turned] = src;
        int u = i > 1 ? S->cols[src][S->len[src] - 2] : BOTTOM;
        key ^= ZDOWN[turned * 53 + u] ^ ZUP[turned * 53 + u];
    }
    S->key = key;
    return journal_push(S, card, src, FOUND, 1, turned);
}

static int reserve_moves(SearchObject *S) {
    return grow((void **)&S->moves, &S->mcap, S->mlen + EXPAND_ROOM, sizeof(int32_t));
}

static int reserve_frame(SearchObject *S) {
    return grow((void **)&S->frames, &S->fcap, S->nframes + 1, sizeof(Frame));
}

static int fail_bad(SearchObject *S) {
    PyErr_SetString(PyExc_RuntimeError, "_solvercore: inconsistent search state");
    (void)S;
    return -1;
}

/* The root part of _search, before the loop: 1 finished, 0 go on, -1 error. */
static int search_start(SearchObject *S) {
    int again = 1;
    while (again) {
        again = 0;
        for (int s = 0; s < 7; s++) {
            int ls = S->len[s];
            if (!ls)
                continue;
            int t = S->cols[s][ls - 1];
            if (S->found[t / 13] == t % 13 && safe_up(S, t)) {
                if (play_up(S, t) < 0)
                    return -1;
                again = 1;
            }
        }
    }
    if (S->up == 52) {
        S->won = 1;
        return 1;
    }
    int r = proven_has(S, S->key);
    if (r < 0)
        return -1;
    if (r || hopeless(S)) {
        S->won = 0;
        return 1;
    }
    S->complete = S->prune_from > 52;
    if (full_init(&S->full, 1024) < 0 || part_init(&S->part, 1024) < 0)
        return -1;
    if (full_put(&S->full, S->key, 0) < 0)
        return -1;
    if (S->complete) {
        if (grow((void **)&S->comp, &S->ccap, 1, sizeof(uint64_t)) < 0)
            return -1;
        S->comp[S->clen++] = S->key;
    }
    S->count = 1;
    S->sleeping = S->sleep && S->complete;
    if (reserve_frame(S) < 0 || reserve_moves(S) < 0)
        return -1;
    Frame *F = &S->frames[0];
    F->moves_off = 0;
    F->moves_len = expand(S, -1, -1, S->moves);
    F->aux_off = 0;
    F->sl_len = F->fz_len = F->tr_len = 0;
    if (S->sleeping &&
        grow((void **)&S->aux, &S->auxcap, (size_t)F->moves_len + 1, sizeof(int32_t)) < 0)
        return -1;
    S->mlen = (size_t)F->moves_len;
    F->pos = 0;
    F->played = 0;
    F->pile_len = 0;
    F->pile0 = F->pile1 = 0;
    F->alive = 1;
    F->key = S->key;
    F->index = 0;
    F->low = 0;
    S->nframes = 1;
    return 0;
}

/* The loop of _search: 0 yielded, 1 finished, -1 error. */
static int search_run(SearchObject *S) {
    uint64_t key;
    int up;
    int c = 0, d = 0, n = 0, rec = -1, k = 0;
    int pile_len = 0, pile0 = 0, pile1 = 0;
    uint64_t code1 = 0;
    int64_t nodes = S->nodes, stop = S->stop;
    int64_t tries = S->tries, hits = S->hits, count = S->count;
    int complete = S->complete;
    int *len = S->len;
    int *down = S->down;
    int *loc = S->loc;
    int *idx = S->idx;
    int *found = S->found;
    uint8_t(*cols)[52] = S->cols;
    int rc = -1;

    if (S->resume) {
        S->resume = 0;
        key = S->y_key;
        up = S->y_up;
        c = S->y_c;
        d = S->y_d;
        n = S->y_n;
        rec = S->y_rec;
        k = S->y_k;
        pile_len = S->y_pile_len;
        pile0 = S->y_pile0;
        pile1 = S->y_pile1;
        code1 = S->y_code1;
        goto resumed;
    }
    key = S->key;
    up = S->up;

    while (S->nframes) {
        {
            size_t depth = S->nframes - 1;
            Frame *F = &S->frames[depth];
            k = F->played;
            if (k) {
                for (int q = 0; q < k; q++) {
                    JEntry *e = &S->journal[--S->jlen];
                    int jc = e->card, js = e->src, jd = e->dest, jn = e->n, jt = e->turned;
                    if (js == 7) {
                        len[jd]--;
                        found[jc / 13] += 1;
                        loc[jc] = FOUND;
                        up += 1;
                        continue;
                    }
                    if (jt >= 0) {
                        loc[jt] = DOWN;
                        down[js] += 1;
                    }
                    if (jd == 7) {
                        found[jc / 13] -= 1;
                        idx[jc] = len[js];
                        cols[js][len[js]++] = (uint8_t)jc;
                        loc[jc] = js;
                        up -= 1;
                    } else {
                        int from = len[jd] - jn;
                        for (int q2 = from; q2 < len[jd]; q2++) {
                            int x = cols[jd][q2];
                            idx[x] = len[js];
                            cols[js][len[js]++] = (uint8_t)x;
                            loc[x] = js;
                        }
                        len[jd] = from;
                    }
                }
                F->played = 0;
                key = F->key;
            }
            if (F->pos >= F->moves_len) {
                /* the position is finished */
                S->mlen = F->moves_off;
                S->nframes--;
                uint64_t kp = F->key;
                int64_t j = F->index;
                int64_t lo = F->low;
                if (lo == j) {
                    if (complete) {
                        for (;;) {
                            uint64_t x = S->comp[--S->clen];
                            if (full_put(&S->full, x, DONE) < 0 || proven_add(S, x) < 0)
                                goto error;
                            if (x == kp)
                                break;
                        }
                    }
                } else if (S->nframes && lo < S->frames[S->nframes - 1].low) {
                    S->frames[S->nframes - 1].low = lo;
                }
                continue;
            }
            int32_t m = S->moves[F->moves_off + (size_t)F->pos];
            F->pos += 1;
            c = (m >> 3) & 63;
            d = m & 7;
            if (c >= 52) {
                fail_bad(S);
                goto error;
            }
            int s = loc[c];
            int32_t entry = 0;
            if (S->sleeping) {
                entry = s << 9 | (m & 511);
                const int32_t *aux = S->aux + F->aux_off;
                int skip = 0;
                for (int q = 0; q < F->sl_len; q++) {
                    if (aux[q] == entry) {
                        skip = 1;
                        break;
                    }
                }
                if (!skip && d < 7) {
                    const int32_t *fz = aux + F->sl_len;
                    for (int q = 0; q < F->fz_len; q++) {
                        int32_t e = fz[q];
                        if (FZ_CARD(e) == c && !((FZ_TOUCHED(e) >> d) & 1) &&
                            !(d == FZ_SRC(e) && FZ_TURNED(e) >= 0)) {
                            skip = 1;
                            break;
                        }
                    }
                }
                if (skip)
                    continue; /* its child is reached another way (no node) */
            }
            nodes += 1;
            rec = -1;
            int checked = 0;
            uint64_t checked_key = 0;
            if (s == FOUND) { /* take-back */
                int ld = len[d];
                key ^= ZFOUND[c] ^ ZUP[c * 53 + (ld ? cols[d][ld - 1] : BOTTOM)];
                idx[c] = ld;
                cols[d][len[d]++] = (uint8_t)c;
                found[c / 13] -= 1;
                up -= 1;
                loc[c] = d;
                if (journal_push(S, c, 7, d, 1, -1) < 0)
                    goto error;
                k = 1;
            } else {
                if (s >= 7) {
                    fail_bad(S);
                    goto error;
                }
                int i;
                if (d == 7) {
                    i = len[s] - 1;
                    key ^= ZUP[c * 53 + (i ? cols[s][i - 1] : BOTTOM)] ^ ZFOUND[c];
                    len[s]--;
                    found[c / 13] += 1;
                    up += 1;
                    loc[c] = FOUND;
                    n = 1;
                } else {
                    i = idx[c];
                    int ld = len[d];
                    int under = i ? cols[s][i - 1] : BOTTOM;
                    uint64_t moved = key ^ ZUP[c * 53 + under] ^
                                     ZUP[c * 53 + (ld ? cols[d][ld - 1] : BOTTOM)];
                    uint64_t child = moved;
                    if (i && i == down[s]) {
                        int u = i > 1 ? cols[s][i - 2] : BOTTOM;
                        child ^= ZDOWN[under * 53 + u] ^ ZUP[under * 53 + u];
                    }
                    if (!(i && found[under / 13] == under % 13 && safe_up(S, under))) {
                        /* no card goes up after it: child is the new position's key */
                        int64_t j = full_get(&S->full, child);
                        int known = j >= 0;
                        if (!known) {
                            int r = proven_has(S, child);
                            if (r < 0)
                                goto error;
                            known = r;
                        }
                        if (known) {
                            if (j >= 0 && j < F->low)
                                F->low = j;
                            if (S->sleeping) /* a plain move, tried */
                                S->aux[F->aux_off +
                                       (size_t)(F->sl_len + F->fz_len + F->tr_len++)] = entry;
                            continue;
                        }
                        /* Neither in full nor in proven: unless a card goes up after
                         * all, the lookups below would ask the same again (nothing is
                         * added to either in between), so their answer is known. */
                        checked = 1;
                        checked_key = child;
                    }
                    key = moved;
                    int ls = len[s];
                    for (int q = i; q < ls; q++) {
                        int x = cols[s][q];
                        idx[x] = len[d];
                        cols[d][len[d]++] = (uint8_t)x;
                        loc[x] = d;
                    }
                    len[s] = i;
                    n = ls - i;
                }
                int t = -1;
                if (i) {
                    if (i == down[s]) {
                        t = cols[s][len[s] - 1];
                        down[s] = i - 1;
                        loc[t] = s;
                        int u = i > 1 ? cols[s][len[s] - 2] : BOTTOM;
                        key ^= ZDOWN[t * 53 + u] ^ ZUP[t * 53 + u];
                        rec = c << 8 | t << 2 | K_FLIP;
                    } else {
                        rec = c << 8 | cols[s][len[s] - 1] << 2 | K_UP;
                    }
                } else {
                    rec = c << 8 | K_EMPTY;
                }
                if (journal_push(S, c, s, d, n, t) < 0)
                    goto error;
                k = 1;
                /* safe moves: the new top of the source column first, then all tops */
                if (d == 7 || len[s]) {
                    t = len[s] ? cols[s][len[s] - 1] : 0;
                    if (d == 7 || (found[t / 13] == t % 13 && safe_up(S, t))) {
                        int again = 1;
                        while (again) {
                            again = 0;
                            for (int s2 = 0; s2 < 7; s2++) {
                                int l2 = len[s2];
                                if (!l2)
                                    continue;
                                t = cols[s2][l2 - 1];
                                int su = t / 13;
                                if (found[su] == t % 13 && safe_up(S, t)) {
                                    int j = l2 - 1;
                                    key ^= ZUP[t * 53 + (j ? cols[s2][j - 1] : BOTTOM)] ^ ZFOUND[t];
                                    len[s2]--;
                                    found[su] += 1;
                                    up += 1;
                                    loc[t] = FOUND;
                                    int f = -1;
                                    if (j && j == down[s2]) {
                                        f = cols[s2][len[s2] - 1];
                                        down[s2] = j - 1;
                                        loc[f] = s2;
                                        int u = j > 1 ? cols[s2][len[s2] - 2] : BOTTOM;
                                        key ^= ZDOWN[f * 53 + u] ^ ZUP[f * 53 + u];
                                    }
                                    if (journal_push(S, t, s2, 7, 1, f) < 0)
                                        goto error;
                                    k += 1;
                                    again = 1;
                                }
                            }
                        }
                    }
                }
            }
            F->played = k;
            if (S->sleeping && k == 1 && d < 7 && rec >= 0)
                S->aux[F->aux_off + (size_t)(F->sl_len + F->fz_len + F->tr_len++)] = entry;
            /* the pile of the new position */
            if (up < S->prune_from || k > 1 || d == 7 || rec < 0) {
                pile_len = 0;
            } else if (m & JOIN) {
                pile_len = F->pile_len + 1;
                if (pile_len == 1) {
                    pile0 = rec;
                } else if (pile_len == 2) {
                    pile0 = F->pile0;
                    pile1 = rec;
                } else {
                    fail_bad(S);
                    goto error;
                }
            } else {
                pile_len = 1;
                pile0 = rec;
            }
            if (!(checked && checked_key == key)) {
                int64_t j = full_get(&S->full, key);
                if (j >= 0) {
                    if (j < F->low)
                        F->low = j;
                    continue;
                }
                int r = proven_has(S, key);
                if (r < 0)
                    goto error;
                if (r)
                    continue;
            }
            if (pile_len) {
                int64_t code;
                if (pile_len == 1)
                    code = pile0;
                else {
                    int hi = pile0 > pile1 ? pile0 : pile1;
                    int lo = pile0 > pile1 ? pile1 : pile0;
                    code = (int64_t)hi << 14 | lo;
                }
                code1 = (uint64_t)(code + 1);
                if (part_has(&S->part, key, code1))
                    continue;
            }
            if (up == 52) {
                S->won = 1;
                rc = 1;
                goto out;
            }
            if (nodes >= stop) {
                S->y_key = key;
                S->y_up = up;
                S->y_c = c;
                S->y_d = d;
                S->y_n = n;
                S->y_rec = rec;
                S->y_k = k;
                S->y_pile_len = pile_len;
                S->y_pile0 = pile0;
                S->y_pile1 = pile1;
                S->y_code1 = code1;
                S->resume = 1;
                rc = 0;
                goto out;
            }
        }
    resumed: {
        size_t depth = S->nframes - 1;
        Frame *F = &S->frames[depth];
        /* the dead-end test */
        int known = 0;
        int dead;
        if (d == 7 || rec < 0 || k > 1 || S->journal[S->jlen - 1].turned >= 0) {
            dead = hopeless(S);
            known = !dead;
        } else {
            dead = 0;
            if (F->alive) {
                int other_empty = 0;
                for (int x = 0; x < 7; x++) {
                    if (x != d) {
                        int lx = len[x];
                        if (!lx) {
                            other_empty = 1;
                            if (S->roams[c])
                                known = 1;
                        } else if (S->table[c * 52 + cols[x][lx - 1]]) {
                            known = 1;
                        }
                    }
                }
                if (len[d] == n && !other_empty)
                    known = 0;
            }
            if (!known && (hits * 16 >= tries || !(nodes & 63))) {
                dead = hopeless(S);
                known = !dead;
                tries += 1;
                hits += dead;
            }
        }
        if (dead) {
            if (proven_add(S, key) < 0)
                goto error;
            continue;
        }
        /* the most advanced position so far: what a hint offers when the budget runs out */
        {
            int total = 0;
            for (int x = 0; x < 7; x++)
                total += down[x];
            int score = up << 5 | (31 - total);
            if (score > S->best_score) {
                if (S->jlen > S->bcap &&
                    grow((void **)&S->best, &S->bcap, S->jlen, sizeof(JEntry)) < 0)
                    goto error;
                if (S->jlen)
                    memcpy(S->best, S->journal, S->jlen * sizeof(JEntry));
                S->blen = S->jlen;
                S->best_score = score;
            }
        }
        if (reserve_frame(S) < 0 || reserve_moves(S) < 0)
            goto error;
        F = &S->frames[depth]; /* the frames may have moved */
        Frame *G = &S->frames[depth + 1];
        int32_t *out = S->moves + S->mlen;
        int nm;
        if (pile_len) {
            if (part_add(&S->part, key, code1) < 0)
                goto error;
            nm = expand_pile(S, pile_len, pile0, pile1, out);
            G->low = count;
        } else {
            if (full_put(&S->full, key, count) < 0)
                goto error;
            if (complete) {
                if (S->clen == S->ccap &&
                    grow((void **)&S->comp, &S->ccap, S->clen + 1, sizeof(uint64_t)) < 0)
                    goto error;
                S->comp[S->clen++] = key;
            }
            if (k == 1 && d < 7 && rec >= 0) {
                nm = expand(S, c, S->journal[S->jlen - 1].turned, out);
                G->low = F->index;
            } else {
                nm = expand(S, -1, -1, out);
                G->low = count;
            }
        }
        if (S->bad) {
            fail_bad(S);
            goto error;
        }
        G->moves_off = S->mlen;
        G->moves_len = nm;
        S->mlen += (size_t)nm;
        if (S->sleeping) {
            /* the new position's sleep set and frozen blocks (Python: child_sleep and
             * child_frozen), after the parent's tried moves */
            size_t off = F->aux_off + (size_t)(F->sl_len + F->fz_len + F->moves_len);
            size_t need = off + (size_t)(F->sl_len + F->tr_len + F->fz_len + 1 + nm);
            if (grow((void **)&S->aux, &S->auxcap, need, sizeof(int32_t)) < 0)
                goto error;
            int32_t *pa = S->aux + F->aux_off;
            int32_t *ga = S->aux + off;
            int sl = 0, fz = 0;
            if (k == 1 && d < 7 && rec >= 0) {
                const JEntry *e = &S->journal[S->jlen - 1];
                int src = e->src, dst = e->dest;
                int both = 1 << src | 1 << dst;
                /* sleep: the parent's sleep set and tried moves on other columns (the move
                 * itself, last of the tried ones, is on these columns) */
                for (int q = 0; q < F->sl_len; q++) {
                    int32_t x = pa[q];
                    if (!((both >> (x >> 9)) & 1) && !((both >> (x & 7)) & 1))
                        ga[sl++] = x;
                }
                const int32_t *tr = pa + F->sl_len + F->fz_len;
                for (int q = 0; q < F->tr_len; q++) {
                    int32_t x = tr[q];
                    if (!((both >> (x >> 9)) & 1) && !((both >> (x & 7)) & 1))
                        ga[sl++] = x;
                }
                const int32_t *pf = pa + F->sl_len;
                for (int q = 0; q < F->fz_len; q++) {
                    int32_t x = pf[q];
                    if (!((both >> FZ_SRC(x)) & 1) && !((both >> FZ_DST(x)) & 1))
                        ga[sl + fz++] = x | both;
                }
                ga[sl + fz++] = FZ_PACK(c, src, dst, (int)e->turned, 0);
            }
            G->aux_off = off;
            G->sl_len = sl;
            G->fz_len = fz;
            G->tr_len = 0;
        }
        G->index = count;
        count += 1;
        G->alive = known;
        G->pos = 0;
        G->played = 0;
        G->key = key;
        G->pile_len = pile_len;
        G->pile0 = pile0;
        G->pile1 = pile1;
        S->nframes++;
    }
    }
    S->won = 0;
    rc = 1;
    goto out;
error:
    rc = -1;
out:
    S->key = key;
    S->up = up;
    S->nodes = nodes;
    S->tries = tries;
    S->hits = hits;
    S->count = count;
    return rc;
}

/* -- the Python type ------------------------------------------------------------------- */

static void free_search(SearchObject *S) {
    free(S->full.slots);
    S->full.slots = NULL;
    free(S->part.slots);
    S->part.slots = NULL;
    free(S->comp);
    S->comp = NULL;
    free(S->frames);
    S->frames = NULL;
    free(S->moves);
    S->moves = NULL;
    free(S->aux);
    S->aux = NULL;
}

static void Search_dealloc(SearchObject *S) {
    free_search(S);
    free(S->journal);
    S->journal = NULL;
    free(S->best);
    S->best = NULL;
    Py_XDECREF(S->proven);
    Py_TYPE(S)->tp_free((PyObject *)S);
}

/* A Python int in [lo, hi] from ``obj`` (a borrowed reference), or -1 with an error. */
static int get_int(PyObject *obj, long lo, long hi, const char *what, long *out) {
    long v = PyLong_AsLong(obj);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < lo || v > hi) {
        PyErr_Format(PyExc_ValueError, "%s out of range: %ld", what, v);
        return -1;
    }
    *out = v;
    return 0;
}

/* Copy a sequence of ints into ``out`` (at most ``maxn``), each in [lo, hi]. */
static Py_ssize_t get_ints(PyObject *seq, int *out, Py_ssize_t maxn, long lo, long hi,
                           const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > maxn) {
        PyErr_Format(PyExc_ValueError, "%s: too many items", what);
        Py_DECREF(fast);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long v;
        if (get_int(PySequence_Fast_GET_ITEM(fast, i), lo, hi, what, &v) < 0) {
            Py_DECREF(fast);
            return -1;
        }
        out[i] = (int)v;
    }
    Py_DECREF(fast);
    return n;
}

/* ``getattr(st, name)`` as a new reference. */
static PyObject *attr(PyObject *st, const char *name) { return PyObject_GetAttrString(st, name); }

/* ``getattr(st, name)`` as a fast sequence of exactly ``count`` items (a new reference). */
static PyObject *sequence_attr(PyObject *st, const char *name, Py_ssize_t count) {
    PyObject *o = attr(st, name);
    if (!o)
        return NULL;
    PyObject *fast = PySequence_Fast(o, name);
    Py_DECREF(o);
    if (fast && PySequence_Fast_GET_SIZE(fast) != count) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s must have %zd entries", name, count);
        return NULL;
    }
    return fast;
}

/* ``getattr(st, name)``: exactly ``count`` truthy or falsy items, into ``out`` as 0/1. */
static int get_flags_attr(PyObject *st, const char *name, uint8_t *out, Py_ssize_t count) {
    PyObject *fast = sequence_attr(st, name, count);
    if (!fast)
        return -1;
    for (Py_ssize_t i = 0; i < count; i++) {
        int r = PyObject_IsTrue(PySequence_Fast_GET_ITEM(fast, i));
        if (r < 0) {
            Py_DECREF(fast);
            return -1;
        }
        out[i] = (uint8_t)r;
    }
    Py_DECREF(fast);
    return 0;
}

/* ``getattr(st, name)``: exactly ``count`` ints in lo..hi, into ``out``. */
static int get_int_list_attr(PyObject *st, const char *name, int *out, Py_ssize_t count, long lo,
                             long hi) {
    PyObject *o = attr(st, name);
    if (!o)
        return -1;
    Py_ssize_t n = get_ints(o, out, count, lo, hi, name);
    Py_DECREF(o);
    if (n < 0)
        return -1;
    if (n != count) {
        PyErr_Format(PyExc_ValueError, "%s must have %zd entries", name, count);
        return -1;
    }
    return 0;
}

static int get_int_attr(PyObject *st, const char *name, long lo, long hi, long *out) {
    PyObject *o = attr(st, name);
    if (!o)
        return -1;
    int r = get_int(o, lo, hi, name, out);
    Py_DECREF(o);
    return r;
}

static int get_bool_attr(PyObject *st, const char *name, int *out) {
    PyObject *o = attr(st, name);
    if (!o)
        return -1;
    int r = PyObject_IsTrue(o);
    Py_DECREF(o);
    if (r < 0)
        return -1;
    *out = r;
    return 0;
}

/* A sequence of 52 sequences of cards (builders, seats). */
static int get_card_lists(PyObject *st, const char *name, uint8_t lists[52][52], int *counts) {
    PyObject *o = attr(st, name);
    if (!o)
        return -1;
    PyObject *fast = PySequence_Fast(o, name);
    Py_DECREF(o);
    if (!fast)
        return -1;
    if (PySequence_Fast_GET_SIZE(fast) != 52) {
        PyErr_Format(PyExc_ValueError, "%s must have 52 entries", name);
        Py_DECREF(fast);
        return -1;
    }
    for (int c = 0; c < 52; c++) {
        int tmp[52];
        Py_ssize_t n = get_ints(PySequence_Fast_GET_ITEM(fast, c), tmp, 52, 0, 51, name);
        if (n < 0) {
            Py_DECREF(fast);
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            lists[c][i] = (uint8_t)tmp[i];
        counts[c] = (int)n;
    }
    Py_DECREF(fast);
    return 0;
}

static int load_state(SearchObject *S, PyObject *st) {
    PyObject *o, *fast;
    /* cols */
    o = attr(st, "cols");
    if (!o)
        return -1;
    fast = PySequence_Fast(o, "cols");
    Py_DECREF(o);
    if (!fast)
        return -1;
    if (PySequence_Fast_GET_SIZE(fast) != 7) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "cols must have 7 columns");
        return -1;
    }
    int total = 0;
    for (int c = 0; c < 7; c++) {
        int tmp[52];
        Py_ssize_t n = get_ints(PySequence_Fast_GET_ITEM(fast, c), tmp, 52, 0, 51, "cols");
        if (n < 0) {
            Py_DECREF(fast);
            return -1;
        }
        S->len[c] = (int)n;
        for (Py_ssize_t i = 0; i < n; i++) {
            S->cols[c][i] = (uint8_t)tmp[i];
            S->idx[tmp[i]] = (int)i;
        }
        total += (int)n;
    }
    Py_DECREF(fast);
    if (total > 52) {
        PyErr_SetString(PyExc_ValueError, "more than 52 cards in the columns");
        return -1;
    }
    /* down, loc, found */
    if (get_int_list_attr(st, "down", S->down, 7, 0, 51) < 0 ||
        get_int_list_attr(st, "loc", S->loc, 52, 0, 8) < 0 ||
        get_int_list_attr(st, "found", S->found, 4, 0, 13) < 0)
        return -1;
    /* key, up */
    o = attr(st, "key");
    if (!o)
        return -1;
    S->key = PyLong_AsUnsignedLongLong(o);
    Py_DECREF(o);
    if (S->key == (uint64_t)-1 && PyErr_Occurred())
        return -1;
    long v;
    if (get_int_attr(st, "up", 0, 52, &v) < 0)
        return -1;
    S->up = (int)v;
    if (get_flags_attr(st, "table", S->table, 52 * 52) < 0)
        return -1;
    if (get_card_lists(st, "builders", S->builders, S->nbuilders) < 0 ||
        get_card_lists(st, "seats", S->seats, S->nseats) < 0)
        return -1;
    for (int c = 0; c < 52; c++) {
        S->seatmask[c] = 0;
        for (int q = 0; q < S->nseats[c]; q++)
            S->seatmask[c] |= BIT(S->seats[c][q]);
    }
    if (get_flags_attr(st, "roams", S->roams, 52) < 0)
        return -1;
    if (get_int_attr(st, "limit", 0, 1000000, &v) < 0)
        return -1;
    S->limit = (int)v;
    if (get_bool_attr(st, "open_spaces", &S->open_spaces) < 0 ||
        get_bool_attr(st, "take_back", &S->take_back) < 0)
        return -1;
    /* needs: n0..n3, None -> 99 */
    fast = sequence_attr(st, "needs", 52);
    if (!fast)
        return -1;
    for (int c = 0; c < 52; c++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, c);
        if (item == Py_None) {
            S->n0[c] = S->n1[c] = S->n2[c] = S->n3[c] = 99;
            continue;
        }
        int h[4];
        Py_ssize_t hn = get_ints(item, h, 4, -1000000, 1000000, "needs");
        if (hn < 0) {
            Py_DECREF(fast);
            return -1;
        }
        if (hn != 4) {
            Py_DECREF(fast);
            PyErr_SetString(PyExc_ValueError, "needs entries must have 4 heights");
            return -1;
        }
        S->n0[c] = h[0];
        S->n1[c] = h[1];
        S->n2[c] = h[2];
        S->n3[c] = h[3];
    }
    Py_DECREF(fast);
    /* journal */
    o = attr(st, "journal");
    if (!o)
        return -1;
    fast = PySequence_Fast(o, "journal");
    Py_DECREF(o);
    if (!fast)
        return -1;
    Py_ssize_t jn = PySequence_Fast_GET_SIZE(fast);
    for (Py_ssize_t q = 0; q < jn; q++) {
        int e[5];
        Py_ssize_t en = get_ints(PySequence_Fast_GET_ITEM(fast, q), e, 5, -1, 52, "journal");
        if (en < 0) {
            Py_DECREF(fast);
            return -1;
        }
        if (en != 5) {
            Py_DECREF(fast);
            PyErr_SetString(PyExc_ValueError, "journal entries must have 5 items");
            return -1;
        }
        if (journal_push(S, e[0], e[1], e[2], e[3], e[4]) < 0) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    /* cards on the columns must agree with loc (idx is derived from cols) */
    for (int c = 0; c < 7; c++) {
        if (S->down[c] > S->len[c]) {
            PyErr_SetString(PyExc_ValueError, "more face-down cards than cards in a column");
            return -1;
        }
        for (int i = 0; i < S->len[c]; i++) {
            int x = S->cols[c][i];
            int want = i < S->down[c] ? DOWN : c;
            if (S->loc[x] != want) {
                PyErr_SetString(PyExc_ValueError, "loc does not match cols");
                return -1;
            }
        }
    }
    return 0;
}

static PyObject *Search_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"st", "prune_from", "proven", "jitter", "sleep", NULL};
    PyObject *st, *proven, *jitter;
    int prune_from;
    int sleep = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OiOO|p:Search", kwlist, &st, &prune_from,
                                     &proven, &jitter, &sleep))
        return NULL;
    if (!tables_ready) {
        PyErr_SetString(PyExc_RuntimeError, "_solvercore.set_tables has not been called");
        return NULL;
    }
    int is_cset = PyObject_TypeCheck(proven, &ProvenSetType);
    if (!is_cset && !PySet_Check(proven)) {
        PyErr_SetString(PyExc_TypeError, "proven must be a set or a ProvenSet");
        return NULL;
    }
    SearchObject *S = (SearchObject *)type->tp_alloc(type, 0);
    if (!S)
        return NULL;
    /* tp_alloc zeroes the object: every pointer is NULL, every count 0 */
    Py_INCREF(proven);
    S->proven = proven;
    S->cset = is_cset ? (ProvenSetObject *)proven : NULL;
    S->prune_from = prune_from;
    S->sleep = sleep;
    S->best_score = -1;
    PyObject *fast = PySequence_Fast(jitter, "jitter must be a list");
    if (!fast)
        goto fail;
    Py_ssize_t jn = PySequence_Fast_GET_SIZE(fast);
    if (jn != 0 && jn != 512) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "jitter must have 0 or 512 entries");
        goto fail;
    }
    for (Py_ssize_t i = 0; i < jn; i++) {
        long v;
        if (get_int(PySequence_Fast_GET_ITEM(fast, i), 0, 1 << 20, "jitter", &v) < 0) {
            Py_DECREF(fast);
            goto fail;
        }
        S->jitter[i] = (int32_t)v;
    }
    Py_DECREF(fast);
    S->has_jitter = jn > 0;
    if (load_state(S, st) < 0)
        goto fail;
    return (PyObject *)S;
fail:
    Py_DECREF(S);
    return NULL;
}

static PyObject *Search_advance(SearchObject *S, PyObject *arg) {
    int overflow;
    long long stop = PyLong_AsLongLongAndOverflow(arg, &overflow);
    if (stop == -1 && PyErr_Occurred())
        return NULL;
    if (overflow > 0)
        stop = INT64_MAX;
    else if (overflow < 0)
        stop = INT64_MIN;
    if (S->broken) {
        PyErr_SetString(PyExc_RuntimeError, "this search failed earlier");
        return NULL;
    }
    if (S->finished)
        return PyLong_FromLongLong(S->nodes);
    S->stop = stop;
    int r;
    if (!S->started) {
        S->started = 1;
        r = search_start(S);
        if (r == 0)
            r = search_run(S);
    } else {
        r = search_run(S);
    }
    if (r < 0) {
        S->broken = 1;
        free_search(S);
        return NULL;
    }
    if (r == 1) {
        S->finished = 1;
        free_search(S); /* the tables are no longer needed */
    }
    return PyLong_FromLongLong(S->nodes);
}

static PyObject *entries(const JEntry *journal, size_t jlen) {
    PyObject *list = PyList_New((Py_ssize_t)jlen);
    if (!list)
        return NULL;
    for (size_t i = 0; i < jlen; i++) {
        const JEntry *e = &journal[i];
        PyObject *t = Py_BuildValue("(iiiii)", (int)e->card, (int)e->src, (int)e->dest,
                                    (int)e->n, (int)e->turned);
        if (!t) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
    return list;
}

static PyObject *Search_journal(SearchObject *S, PyObject *Py_UNUSED(ignored)) {
    return entries(S->journal, S->jlen);
}

static PyObject *Search_best(SearchObject *S, PyObject *Py_UNUSED(ignored)) {
    return entries(S->best, S->blen);
}

static PyObject *Search_get_best_score(SearchObject *S, void *Py_UNUSED(closure)) {
    return PyLong_FromLong(S->best_score);
}

static PyObject *Search_get_result(SearchObject *S, void *Py_UNUSED(closure)) {
    if (!S->finished)
        Py_RETURN_NONE;
    if (S->won)
        Py_RETURN_TRUE;
    Py_RETURN_FALSE;
}

static PyObject *Search_get_nodes(SearchObject *S, void *Py_UNUSED(closure)) {
    return PyLong_FromLongLong(S->nodes);
}

static PyMethodDef Search_methods[] = {
    {"advance", (PyCFunction)Search_advance, METH_O,
     "advance(stop) -> int: search on until a node count of at least stop, or the end."},
    {"journal", (PyCFunction)Search_journal, METH_NOARGS,
     "journal() -> list: the undo records of the moves from the start to the current position."},
    {"best", (PyCFunction)Search_best, METH_NOARGS,
     "best() -> list: the journal of the most advanced position reached (best_score)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Search_getset[] = {
    {"result", (getter)Search_get_result, NULL, "None while running, then True (won) or False.",
     NULL},
    {"nodes", (getter)Search_get_nodes, NULL, "The node count so far.", NULL},
    {"best_score", (getter)Search_get_best_score, NULL,
     "The score of best(): cards up << 5 | (31 - cards face down); -1 before any.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject SearchType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "solver._solvercore.Search",
    .tp_doc = "Search(st, prune_from, proven, jitter): solver.search._search in C; proven is\n"
              "a ProvenSet or a set of ints.",
    .tp_basicsize = sizeof(SearchObject),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Search_new,
    .tp_dealloc = (destructor)Search_dealloc,
    .tp_methods = Search_methods,
    .tp_getset = Search_getset,
};

/* -- the module -------------------------------------------------------------------------- */

static int copy_table(PyObject *seq, uint64_t *out, Py_ssize_t n, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast)
        return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        PyErr_Format(PyExc_ValueError, "%s must have %zd entries", what, n);
        Py_DECREF(fast);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t v = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == (uint64_t)-1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        out[i] = v;
    }
    Py_DECREF(fast);
    return 0;
}

static PyObject *set_tables(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *zup, *zdown, *zfound;
    if (!PyArg_ParseTuple(args, "OOO:set_tables", &zup, &zdown, &zfound))
        return NULL;
    /* copied in full before any is installed: a bad argument changes nothing */
    uint64_t *buf = (uint64_t *)malloc(sizeof ZUP + sizeof ZDOWN + sizeof ZFOUND);
    if (!buf)
        return PyErr_NoMemory();
    uint64_t *up = buf, *dn = buf + 52 * 53, *fd = buf + 2 * 52 * 53;
    if (copy_table(zup, up, 52 * 53, "zup") < 0 || copy_table(zdown, dn, 52 * 53, "zdown") < 0 ||
        copy_table(zfound, fd, 52, "zfound") < 0) {
        free(buf);
        return NULL;
    }
    memcpy(ZUP, up, sizeof ZUP);
    memcpy(ZDOWN, dn, sizeof ZDOWN);
    memcpy(ZFOUND, fd, sizeof ZFOUND);
    free(buf);
    tables_ready = 1;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"set_tables", set_tables, METH_VARARGS,
     "set_tables(zup, zdown, zfound): the Zobrist tables (solver.search._ZUP, _ZDOWN, _ZFOUND)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "solver._solvercore",
    .m_doc = "The hot search loop of solver.search in C (node for node the same).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__solvercore(void) {
    if (PyType_Ready(&SearchType) < 0 || PyType_Ready(&ProvenSetType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    Py_INCREF(&SearchType);
    if (PyModule_AddObject(m, "Search", (PyObject *)&SearchType) < 0) {
        Py_DECREF(&SearchType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&ProvenSetType);
    if (PyModule_AddObject(m, "ProvenSet", (PyObject *)&ProvenSetType) < 0) {
        Py_DECREF(&ProvenSetType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
